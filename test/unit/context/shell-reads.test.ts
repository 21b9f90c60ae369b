/**
 * The files a shell command touches by printing them, redirecting output into them, removing,
 * moving, copying or creating them (agents run much of their work through a shell): reads,
 * `sed -i` edits, redirections as writes, `rm` as removals, and a here-document's lines read as
 * data, never as commands, unless they are a patch given to `apply_patch` or a script given to
 * Python (whose `open()` and `pathlib` reads and writes are read).
 */
import { describe, expect, it } from 'vitest';
import { shellReads, toolCallEffect } from '../../../src/context/tool-facts';

describe('shellReads', () => {
  it.each<[string, string, { path: string; op: string }[]]>([
    [
      'printing files',
      'cat a.ts b.ts | grep x',
      [
        { path: 'a.ts', op: 'read' },
        { path: 'b.ts', op: 'read' },
      ],
    ],
    [
      'a range of lines',
      "sed -n '1,80p' src/a.ts && nl -ba src/b.ts",
      [
        { path: 'src/a.ts', op: 'read' },
        { path: 'src/b.ts', op: 'read' },
      ],
    ],
    ['head with a count', 'head -n 40 README.md', [{ path: 'README.md', op: 'read' }]],
    ['an edit in place', "sed -i 's/a/b/' src/c.ts", [{ path: 'src/c.ts', op: 'edit' }]],
    ['an append', 'echo done >> notes.md', [{ path: 'notes.md', op: 'write' }]],
    [
      'a redirection written together',
      'python gen.py >out/report.txt 2>&1',
      [{ path: 'out/report.txt', op: 'write' }],
    ],
    ['output thrown away', 'cat a.ts > /dev/null 2>&1', [{ path: 'a.ts', op: 'read' }]],
    [
      "BSD sed's in-place edit with no backup suffix",
      "sed -i '' 's/main-new/main/g' src/cli.ts",
      [{ path: 'src/cli.ts', op: 'edit' }],
    ],
    [
      'scripts given by -e',
      "sed -e 's/a/b/' -e 's/c/d/' src/a.ts src/b.ts",
      [
        { path: 'src/a.ts', op: 'read' },
        { path: 'src/b.ts', op: 'read' },
      ],
    ],
    ['a script file', 'sed -f fix.sed -n src/a.ts', [{ path: 'src/a.ts', op: 'read' }]],
    [
      'files removed',
      'rm -f src/a.py src/b.py && git rm -q old/c.py',
      [
        { path: 'src/a.py', op: 'remove' },
        { path: 'src/b.py', op: 'remove' },
        { path: 'old/c.py', op: 'remove' },
      ],
    ],
    [
      'a file moved, one copied, one created',
      'mv src/a.ts src/b.ts; cp -p README.md docs/README.md; touch src/c.ts',
      [
        { path: 'src/a.ts', op: 'remove' },
        { path: 'src/b.ts', op: 'write' },
        { path: 'README.md', op: 'read' },
        { path: 'docs/README.md', op: 'write' },
        { path: 'src/c.ts', op: 'write' },
      ],
    ],
    ['a file moved into a directory', 'git mv src/a.ts lib/', [{ path: 'src/a.ts', op: 'remove' }]],
    [
      'a relative path after a cd is in that directory',
      'cd packages/tui && cat test/a.ts; cd ../ai; rm -f ./src/b.ts; cat /etc/hosts',
      [
        { path: 'packages/tui/test/a.ts', op: 'read' },
        { path: 'packages/ai/src/b.ts', op: 'remove' },
        { path: '/etc/hosts', op: 'read' },
      ],
    ],
    [
      'back up with cd ..',
      'cd pkg && cat a.ts && cd .. && cat b.ts',
      [
        { path: 'pkg/a.ts', op: 'read' },
        { path: 'b.ts', op: 'read' },
      ],
    ],
    [
      'a cd inside a subshell stays there',
      '(cd frontend && npm run build) && cat frontend/dist/index.html; (cd pkg && cat README.md)',
      [
        { path: 'frontend/dist/index.html', op: 'read' },
        { path: 'pkg/README.md', op: 'read' },
      ],
    ],
    ['a cd with an option', 'cd -P src && cat a.ts', [{ path: 'src/a.ts', op: 'read' }]],
    [
      'quoted sed scripts with spaces and pipes are scripts',
      "sed -i 's/from utils.helpers import x/from app.helpers import x/' src/main.py; sed -i 's|a.b|c.d|' f.py",
      [
        { path: 'src/main.py', op: 'edit' },
        { path: 'f.py', op: 'edit' },
      ],
    ],
    ['cat -n takes no value', 'cat -n src/a.py # not c.txt', [{ path: 'src/a.py', op: 'read' }]],
    ['git rm --cached leaves the file', 'git rm --cached .env', []],
    [
      'options that take a value',
      'mv -t dst/ a.txt; cp --target-directory=out b.txt; touch -r ref.txt t.txt',
      [
        { path: 'a.txt', op: 'remove' },
        { path: 'b.txt', op: 'read' },
        { path: 't.txt', op: 'write' },
      ],
    ],
    [
      'an absolute cd',
      'cd /testbed && sed -n 1,20p sympy/core.py',
      [{ path: '/testbed/sympy/core.py', op: 'read' }],
    ],
    [
      'a cd to somewhere unknown: paths as written',
      'cd "$REPO" && cat src/a.ts',
      [{ path: 'src/a.ts', op: 'read' }],
    ],
    [
      'the directory itself is no file',
      'cp -r build/out . && mv dist/app.js ..',
      [
        { path: 'build/out', op: 'read' },
        { path: 'dist/app.js', op: 'remove' },
      ],
    ],
    [
      'a Python script in a here-document reads and writes a file through a name bound to Path',
      "python - <<'PY'\nfrom pathlib import Path\np=Path('django/utils/http.py')\ns=p.read_text()\np.write_text(s.replace('a', 'b'))\nPY",
      [{ path: 'django/utils/http.py', op: 'edit' }],
    ],
    [
      "open() with a mode writes ('w', 'a', after other arguments, 'r+' edits); a file only read is left out; the cd applies",
      'cd /testbed && python3 -u - <<EOF\nsrc = open("src/a.py").read()\nopen("src/b.py", encoding="utf-8", mode="w").write(src)\nwith open(\'log.txt\', \'r+\') as fh:\n    fh.write(src)\nEOF',
      [
        { path: '/testbed/src/b.py', op: 'write' },
        { path: '/testbed/log.txt', op: 'edit' },
      ],
    ],
    [
      "the script's command's own redirection; an indented one; a comment and an f-string are no files",
      "  python - <<'PY' > out.txt\n# open('old.py', 'w')\nf = 'x.py'\nopen(f\"{d}/a.py\", 'w')\nPY",
      [{ path: 'out.txt', op: 'write' }],
    ],
    [
      'the script of each Python command, not of one before it that takes no script',
      "python manage.py shell <<IN\nprint(1)\nIN\ncd sub && python - <<'PY'\nopen('a.py', 'w')\nPY",
      [{ path: 'sub/a.py', op: 'write' }],
    ],
    [
      'a script given with -c (escaped quotes too), and no -c of a module',
      `python -c "open('notes/out.txt', 'a').write('x')" && python3 -c "open(\\"b.txt\\", \\"w\\")" && python -m pytest -c setup.cfg > log.txt`,
      [
        { path: 'notes/out.txt', op: 'write' },
        { path: 'b.txt', op: 'write' },
        { path: 'log.txt', op: 'write' },
      ],
    ],
    [
      'a command run by another (timeout, sudo, env, nice) or by its path, variables set before it',
      "timeout 60 python - <<'PY'\nopen('a.py', 'w')\nPY\n/usr/bin/python3 -c \"open('b.txt', 'w')\" && " +
        'LANG=C sudo -u me cat /etc/hosts; env -u X PYTHONPATH=src nice -n 5 sed -n 1,5p src/c.py; ' +
        "/testbed/.venv/bin/python - << 'EOF'\nopen('d.py', 'w')\nEOF",
      [
        { path: 'a.py', op: 'write' },
        { path: 'b.txt', op: 'write' },
        { path: '/etc/hosts', op: 'read' },
        { path: 'src/c.py', op: 'read' },
        { path: 'd.py', op: 'write' },
      ],
    ],
    [
      'a wrapper given by its path; one that runs the command elsewhere gives nothing',
      "/usr/bin/env python3 - <<'PY'\nopen('out.txt', 'w')\nPY\n/usr/bin/time -v cat a.txt; env -C sub cat b.txt; sudo --chdir=/srv cat c.yml",
      [
        { path: 'out.txt', op: 'write' },
        { path: 'a.txt', op: 'read' },
      ],
    ],
    [
      'two here-documents on one line, each body data, the second given to Python',
      "cat > a.txt <<'A' && python3 - <<'B'\ncat b.txt\nA\nopen('c.txt', 'w')\nB\ncat d.txt",
      [
        { path: 'a.txt', op: 'write' },
        { path: 'c.txt', op: 'write' },
        { path: 'd.txt', op: 'read' },
      ],
    ],
    [
      'a here-string is no here-document: the lines after it are commands',
      'grep -c x <<< "EOF"\ncat a.txt\nEOF',
      [{ path: 'a.txt', op: 'read' }],
    ],
    [
      'Python run from a variable named for it; another variable runs no Python',
      `"$PYTHON" -c "import sys; open('out/.python_path', 'w').write(sys.executable)" && ` +
        `\${VENV_PY:-python3} - <<'PY'\nopen('a.txt', 'w')\nPY\n$PYPI_TOOL -c "open('b.txt', 'w')"; $PY_LINT -c "open('e.txt', 'w')"`,
      [
        { path: 'out/.python_path', op: 'write' },
        { path: 'a.txt', op: 'write' },
      ],
    ],
    [
      'a script a shell runs, given with -c, also through another program (in its own directory there)',
      "docker exec box bash -lc 'cd ~/b && make > /tmp/r.log 2>&1; tail -20 /tmp/r.log' && " +
        'cd sub && sh -c "cat c.txt && echo \\"x\\" > d.txt"; ' +
        "xargs -I{} bash -c '\n  cat {} > /tmp/w.txt' 2>/dev/null > /tmp/v.txt",
      [
        { path: '/tmp/r.log', op: 'write' },
        { path: '/tmp/r.log', op: 'read' },
        { path: 'sub/c.txt', op: 'read' },
        { path: 'sub/d.txt', op: 'write' },
        { path: '/tmp/w.txt', op: 'write' },
        { path: '/tmp/v.txt', op: 'write' },
      ],
    ],
    [
      "a wrapper's long options and their values",
      'timeout --signal KILL --kill-after 5 60 cat a.txt; sudo --user me --group staff head b.txt; ' +
        'time --format %e --output t.log cat c.txt; nice --adjustment 5 cat d.txt; timeout --signal=TERM 9 cat e.txt',
      [
        { path: 'a.txt', op: 'read' },
        { path: 'b.txt', op: 'read' },
        { path: 'c.txt', op: 'read' },
        { path: 'd.txt', op: 'read' },
        { path: 'e.txt', op: 'read' },
      ],
    ],
    [
      'strings that are no files, and a script file run',
      "python - <<'PY'\nold = \"save(update_fields={'model'})\"\nprint(old, open(old))\nPY\npython check.py",
      [],
    ],
  ])('%s: %s', (_, command, touches) => {
    expect(shellReads(command)).toStrictEqual(touches);
  });

  it('a file written from a here-document is written, and the document is data', () => {
    const command = [
      "cat > /tmp/fix.py << 'EOF'",
      'cat secrets.txt',
      "with open('src/a.ts') as f: print(f.read())",
      'EOF',
      'python /tmp/fix.py && head -5 src/a.ts',
    ].join('\n');
    expect(shellReads(command)).toStrictEqual([
      { path: '/tmp/fix.py', op: 'write' },
      { path: 'src/a.ts', op: 'read' },
    ]);
  });

  it.each([
    ['bash', 'pi'],
    ['Bash', 'Claude Code'],
    ['execute_bash', 'OpenHands'],
  ])("a string command (%s, %s's shell) touches what it prints and writes", (tool) => {
    const effect = toolCallEffect(
      tool,
      JSON.stringify({ command: "cd pkg && sed -n '1,40p' src/a.ts | head -5 > /tmp/top.txt" }),
      null,
    );
    expect(effect.touches).toStrictEqual([
      { path: 'pkg/src/a.ts', op: 'read' },
      { path: '/tmp/top.txt', op: 'write' },
    ]);
  });

  it('a command of a tool that is no shell touches nothing', () => {
    expect(toolCallEffect('search', JSON.stringify({ command: 'cat a.ts' }), null).touches).toStrictEqual([]);
  });

  it.each(['apply_patch', 'applypatch'])(
    'a patch given to %s in a here-document touches its files, and is no command',
    (program) => {
      const script = [
        `cd app && ${program} <<'PATCH'`,
        '*** Begin Patch',
        '*** Add File: src/new.ts',
        '+cat secrets.txt',
        '*** Update File: src/old.ts',
        '@@',
        '-a',
        '+b',
        '*** Delete File: src/gone.ts',
        '*** End Patch',
        'PATCH',
        'head -3 src/new.ts',
      ].join('\n');
      const effect = toolCallEffect('shell', JSON.stringify({ command: ['bash', '-lc', script] }), null);
      expect(effect.touches).toStrictEqual([
        { path: 'app/src/new.ts', op: 'write' },
        { path: 'app/src/old.ts', op: 'edit' },
        { path: 'app/src/gone.ts', op: 'delete' },
        { path: 'app/src/new.ts', op: 'read' },
      ]);
    },
  );

  it('a here-document given to another program is data, even when it looks like a patch', () => {
    const command = ["cat > notes.md <<'EOF'", '*** Update File: src/a.ts', 'EOF'].join('\n');
    expect(shellReads(command)).toStrictEqual([{ path: 'notes.md', op: 'write' }]);
  });

  it("Codex's shell argv touches what its script touches", () => {
    const effect = toolCallEffect(
      'shell',
      JSON.stringify({ command: ['bash', '-lc', "cat > notes.md <<'EOF'\n# notes\nEOF"] }),
      null,
    );
    expect(effect.touches).toStrictEqual([{ path: 'notes.md', op: 'write' }]);
  });
});
