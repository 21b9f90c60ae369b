/**
 * The artifact trail (seed 001 "files created, modified, or analyzed"): which files the agent read
 * and which it changed, and which commands it ran, taken from the tool calls. Used by the summary
 * request (so the summary keeps them) and by the extractive summarizer.
 *
 * Pure module.
 */
import type { ContextItem } from './items';
import { toolCategory } from './task-type';

export interface ArtifactTrail {
  /** Paths read or listed, first-seen order, no duplicates. */
  read: string[];
  /** Paths written, edited or created. */
  modified: string[];
  /** Shell commands run. */
  commands: string[];
}

const PATH_KEYS = [
  'path',
  'file',
  'file_path',
  'filePath',
  'filename',
  'filepath',
  'target',
  'dir',
  'directory',
];
const COMMAND_KEYS = ['command', 'cmd', 'script'];

function parseArguments(text: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

function firstString(args: Record<string, unknown>, keys: readonly string[]): string | null {
  for (const key of keys) {
    const value = args[key];
    if (typeof value === 'string' && value.trim().length > 0) return value.trim();
  }
  return null;
}

function addOnce(list: string[], value: string, limit: number): void {
  if (!list.includes(value) && list.length < limit) list.push(value);
}

/** The trail of these items' tool calls (at most `limit` entries per list). */
export function artifactTrail(items: readonly ContextItem[], limit = 200): ArtifactTrail {
  const trail: ArtifactTrail = { read: [], modified: [], commands: [] };
  for (const item of items) {
    if (item.type !== 'ASSISTANT_MESSAGE') continue;
    for (const call of item.message.tool_calls ?? []) {
      const args = parseArguments(call.function.arguments);
      if (!args) continue;
      const path = firstString(args, PATH_KEYS);
      const command = firstString(args, COMMAND_KEYS);
      if (command)
        addOnce(trail.commands, command.length > 200 ? `${command.slice(0, 200)}…` : command, limit);
      if (!path) continue;
      if (toolCategory(call.function.name) === 'code') addOnce(trail.modified, path, limit);
      else addOnce(trail.read, path, limit);
    }
  }
  return trail;
}

/** The trail as text for a prompt, or '' when empty. */
export function formatArtifactTrail(trail: ArtifactTrail): string {
  const lines: string[] = [];
  if (trail.modified.length > 0) lines.push(`Files modified: ${trail.modified.join(', ')}`);
  if (trail.read.length > 0) lines.push(`Files read: ${trail.read.join(', ')}`);
  if (trail.commands.length > 0) lines.push(`Commands run: ${trail.commands.slice(-20).join(' ; ')}`);
  return lines.join('\n');
}
