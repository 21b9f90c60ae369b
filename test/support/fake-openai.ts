/**
 * A fake OpenAI-compatible server for tests: a real HTTP server on 127.0.0.1 (random port) that
 * speaks `POST /v1/chat/completions` (JSON and SSE streaming) and `GET /v1/models` as the `openai`
 * SDK expects, records every request, and answers from a script: replies, tool calls, odd shapes
 * (content null, empty, cut at the token limit, reasoning only) and faults (500, 429 with
 * retry-after, 400 context_length_exceeded, 401, a hang past the client's timeout, a dropped
 * connection).
 *
 * ```ts
 * const llm = await startFakeOpenAI();
 * llm.script(step.toolCalls([{ name: 'read_file', arguments: { path: 'a.txt' } }]), step.text('done'));
 * llm.when(isSummaryRequest).script(step.emptyContent(), step.summary('the task so far'));
 * const client = new OpenAI({ baseURL: llm.url, apiKey: 'test', maxRetries: 0 });
 * ...
 * expect(llm.chatRequests()).toHaveLength(3);
 * await llm.close();
 * ```
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import {
  isSummaryRequest,
  type FakeChatBody,
  type FakeStep,
  type RecordedRequest,
  type StepOrResponder,
} from './fake-openai-steps';
import {
  buildCompletion,
  sendError,
  sendHttpError,
  sendJson,
  sendStream,
  validateChatBody,
} from './fake-openai-wire';

export {
  estimatePromptTokens,
  estimateTokens,
  fakeMessageText,
  isSummaryRequest,
  lastMessageText,
  route,
  step,
  type DisconnectStep,
  type FakeChatBody,
  type FakeMessage,
  type FakeResponder,
  type FakeStep,
  type FakeToolCall,
  type FakeUsage,
  type HangStep,
  type HttpErrorStep,
  type RecordedRequest,
  type ReplyStep,
  type StepOrResponder,
} from './fake-openai-steps';

export interface FakeOpenAIOptions {
  /** When set, requests must carry `Authorization: Bearer <apiKey>`; others get 401. Default: any key. */
  apiKey?: string;
  /** Models listed by `GET /v1/models`. Default: `['fake-model', 'fake-summarizer']`. */
  models?: string[];
  /**
   * Refuse malformed chat requests with a 400 as OpenAI does: no model, no messages, an assistant
   * tool call without its tool result, a tool result without its call. Default: true.
   */
  strict?: boolean;
  /** The answer when nothing is scripted. Default: {@link defaultResponder}. */
  defaultResponder?: StepOrResponder;
  /**
   * Keep only the last this many requests in `requests` (long benchmarks send thousands of whole
   * contexts; all of them would not fit in memory). Default: every request.
   */
  maxRecorded?: number;
}

/** A separate script queue for the requests a predicate matches (e.g. summary requests). */
export interface FakeLane {
  /** Queue steps for matching requests, consumed in order. */
  script(...steps: StepOrResponder[]): FakeLane;
  /** Answer for matching requests once the queue is empty (`undefined`: the server's default). */
  setDefault(responder: StepOrResponder | undefined): FakeLane;
  /** Steps still queued. */
  readonly pending: number;
}

export interface FakeOpenAI {
  /** Base URL for the SDK, ending in `/v1`. */
  url: string;
  port: number;
  /** Every request received since start or the last `reset()` (the last `maxRecorded`), in order (a live array). */
  requests: RecordedRequest[];
  /** The `POST /v1/chat/completions` requests only. */
  chatRequests(): RecordedRequest[];
  /** Queue steps for chat requests no lane claims, consumed in order. */
  script(...steps: StepOrResponder[]): void;
  /**
   * A lane for requests matching `predicate`. Lanes are tried in creation order; a matching lane
   * answers from its queue, then its default, then the server default (never the main queue).
   */
  when(predicate: (request: RecordedRequest) => boolean): FakeLane;
  /** The answer when nothing is queued. */
  setDefault(responder: StepOrResponder): void;
  /** Steps still queued, main queue and lanes together. */
  pending(): number;
  /** Forget requests, queues, lanes and the custom default. */
  reset(): void;
  /** Stop listening, end hanging requests and close every connection. */
  close(): Promise<void>;
}

/**
 * The answer when nothing is scripted: a `<summary>` for summary requests, `ok` otherwise, with
 * usage estimated from the request.
 */
export function defaultResponder(request: RecordedRequest): FakeStep {
  if (isSummaryRequest(request)) {
    const count = request.body.messages?.length ?? 0;
    return {
      type: 'reply',
      content: `<summary>\nFake summary of a request with ${count} messages.\n</summary>`,
    };
  }
  return { type: 'reply', content: 'ok' };
}

interface Lane {
  predicate: (request: RecordedRequest) => boolean;
  queue: StepOrResponder[];
  fallback: StepOrResponder | undefined;
}

/** Starts the server on 127.0.0.1 with a random free port. */
export async function startFakeOpenAI(options: FakeOpenAIOptions = {}): Promise<FakeOpenAI> {
  const models = options.models ?? ['fake-model', 'fake-summarizer'];
  const strict = options.strict ?? true;
  const requests: RecordedRequest[] = [];
  let arrivals = 0;
  let queue: StepOrResponder[] = [];
  let lanes: Lane[] = [];
  let fallback: StepOrResponder = options.defaultResponder ?? defaultResponder;
  let completionCount = 0;
  let closing = false;
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks).toString('utf8');
      handle(req, res, rawBody).catch((err: unknown) => {
        if (!res.headersSent) sendError(res, 500, 'server_error', `fake server bug: ${String(err)}`);
        else res.destroy();
      });
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  async function handle(req: IncomingMessage, res: ServerResponse, rawBody: string): Promise<void> {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const method = req.method ?? 'GET';
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (value !== undefined) headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
    }
    let body: FakeChatBody = {};
    let parseError: string | null = null;
    if (rawBody.length > 0) {
      try {
        const parsed: unknown = JSON.parse(rawBody);
        if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) body = parsed as FakeChatBody;
        else parseError = 'The request body must be a JSON object.';
      } catch {
        parseError = 'We could not parse the JSON body of your request.';
      }
    }
    const request: RecordedRequest = {
      index: arrivals++,
      method,
      path,
      headers,
      body,
      rawBody,
      time: Date.now(),
    };
    requests.push(request);
    if (options.maxRecorded !== undefined && requests.length > options.maxRecorded) {
      requests.splice(0, requests.length - options.maxRecorded);
    }

    const presented = (headers['authorization'] ?? '').replace(/^Bearer\s+/i, '');
    if (options.apiKey !== undefined && presented !== options.apiKey) {
      return sendError(res, 401, 'invalid_request_error', `Incorrect API key provided: ${presented}`, {
        code: 'invalid_api_key',
      });
    }
    if (parseError) return sendError(res, 400, 'invalid_request_error', parseError);

    if (method === 'GET' && path === '/v1/models') {
      return sendJson(res, 200, {
        object: 'list',
        data: models.map((id) => ({ id, object: 'model', created: 1_700_000_000, owned_by: 'fake-openai' })),
      });
    }
    const modelMatch = /^\/v1\/models\/(.+)$/.exec(path);
    if (method === 'GET' && modelMatch) {
      const id = decodeURIComponent(modelMatch[1] ?? '');
      if (!models.includes(id)) {
        return sendError(res, 404, 'invalid_request_error', `The model '${id}' does not exist`, {
          code: 'model_not_found',
        });
      }
      return sendJson(res, 200, { id, object: 'model', created: 1_700_000_000, owned_by: 'fake-openai' });
    }
    if (method === 'POST' && path === '/v1/chat/completions') {
      if (strict) {
        const problem = validateChatBody(body);
        if (problem) return sendError(res, 400, 'invalid_request_error', problem);
      }
      const answer = await nextStep(request);
      return answerChat(req, res, request, answer, presented);
    }
    return sendError(res, 404, 'invalid_request_error', `Unknown request URL: ${method} ${path}.`, {
      code: 'unknown_url',
    });
  }

  async function nextStep(request: RecordedRequest): Promise<FakeStep> {
    const lane = lanes.find((l) => l.predicate(request));
    const source = lane ? (lane.queue.shift() ?? lane.fallback ?? fallback) : (queue.shift() ?? fallback);
    return typeof source === 'function' ? source(request) : source;
  }

  function answerChat(
    req: IncomingMessage,
    res: ServerResponse,
    request: RecordedRequest,
    answer: FakeStep,
    presentedKey: string,
  ): void {
    switch (answer.type) {
      case 'hang':
        // Hold the socket; the client's timeout or close() ends it.
        req.socket.setTimeout(0);
        return;
      case 'disconnect':
        res.destroy();
        return;
      case 'http_error':
        return sendHttpError(res, answer, presentedKey);
      case 'reply': {
        const send = () => {
          if (closing) return void res.destroy();
          const completion = buildCompletion(request, answer, ++completionCount);
          if (request.body.stream === true) sendStream(res, completion, request.body);
          else sendJson(res, 200, completion);
        };
        if (answer.delayMs && answer.delayMs > 0) {
          const timer = setTimeout(() => {
            timers.delete(timer);
            send();
          }, answer.delayMs);
          timers.add(timer);
        } else {
          send();
        }
        return;
      }
      default: {
        const unknown: never = answer;
        throw new Error(`unknown step ${JSON.stringify(unknown)}`);
      }
    }
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;

  const makeLane = (lane: Lane): FakeLane => {
    const handle: FakeLane = {
      script(...steps) {
        lane.queue.push(...steps);
        return handle;
      },
      setDefault(responder) {
        lane.fallback = responder;
        return handle;
      },
      get pending() {
        return lane.queue.length;
      },
    };
    return handle;
  };

  return {
    url: `http://127.0.0.1:${port}/v1`,
    port,
    requests,
    chatRequests: () => requests.filter((r) => r.method === 'POST' && r.path === '/v1/chat/completions'),
    script(...steps) {
      queue.push(...steps);
    },
    when(predicate) {
      const lane: Lane = { predicate, queue: [], fallback: undefined };
      lanes.push(lane);
      return makeLane(lane);
    },
    setDefault(responder) {
      fallback = responder;
    },
    pending: () => queue.length + lanes.reduce((n, l) => n + l.queue.length, 0),
    reset() {
      requests.length = 0;
      arrivals = 0;
      queue = [];
      lanes = [];
      fallback = options.defaultResponder ?? defaultResponder;
    },
    close() {
      closing = true;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      return new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        for (const socket of sockets) socket.destroy();
      });
    },
  };
}
