/**
 * The one writer of every streaming transport (graphql-sse in both modes, `multipart/mixed`,
 * WebSocket): what waits to be written to one stream is counted in bytes — from the moment a
 * frame is handed over until its connection has taken it (the write's callback) — and bounded.
 *
 * - A producer awaits {@link StreamWriter.ready} before it pulls its next result, as graphql-ws
 *   and graphql-sse await each write: a stream whose client reads slowly is not pulled faster than
 *   it is read, and its upstream polls wait with it.
 * - Frames written past the bound (`STREAM_MAX_BUFFERED_BYTES`; many operations on one
 *   connection, each with its own result) end the stream: its memory never grows with what the
 *   client does not read. One frame on an empty stream always goes, whatever its size.
 * - Frames waiting with no progress for `STREAM_WRITE_TIMEOUT_MS` end the stream too.
 *
 * A writer may be made before its connection exists (a graphql-sse reservation whose stream is
 * not open yet): frames wait in it, counted against the same bound, until {@link attach}.
 */

/** Where a writer's frames go: an HTTP answer or a WebSocket. */
export interface StreamSink {
  /** Writes one frame; `done` is called once the connection has taken it (or failed to). */
  send(frame: string, done: () => void): void;
  /** Whether the connection can take no more frames (ended, closed, destroyed). */
  closed(): boolean;
}

export type StreamEndReason = 'overflow' | 'stalled';

export interface StreamLimits {
  /** Most bytes waiting to be written to one stream. */
  maxBufferedBytes: number;
  /** Longest time frames may wait with none of them written (ms). */
  writeTimeoutMs: number;
}

/** Below this many bytes waiting, a producer may pull its next result. */
const READY_BYTES = 64 * 1024;

export class StreamWriter {
  readonly #limits: StreamLimits;
  readonly #onEnd: (reason: StreamEndReason) => void;
  #sink: StreamSink | undefined;
  /** Frames handed over before the connection existed. */
  #queue: string[] = [];
  #waiting = 0;
  #ended = false;
  #stall: ReturnType<typeof setTimeout> | undefined;
  #ready: { promise: Promise<boolean>; resolve: (open: boolean) => void } | undefined;

  /**
   * `onEnd` is called once when the writer ends the stream (overflow, stall): it must close the
   * connection, which is what frees what waits in it.
   */
  constructor(limits: StreamLimits, onEnd: (reason: StreamEndReason) => void, sink?: StreamSink) {
    this.#limits = limits;
    this.#onEnd = onEnd;
    this.#sink = sink;
  }

  /** Bytes waiting to be written. */
  get waiting(): number {
    return this.#waiting;
  }

  /** Whether this writer takes no more frames (it ended the stream, or its connection closed). */
  get ended(): boolean {
    return this.#ended || (this.#sink?.closed() ?? false);
  }

  /** The connection frames go to from now on; what waited for it is written first. */
  attach(sink: StreamSink): void {
    this.#sink = sink;
    const queued = this.#queue;
    this.#queue = [];
    // They were counted when handed over: sending them counts them again.
    for (const frame of queued) {
      this.#waiting -= Buffer.byteLength(frame);
      this.#send(frame);
    }
    this.#settle();
  }

  /**
   * Hands one frame over. False when it was not taken: the stream had ended, or it would have
   * gone over the bound, which ends the stream now.
   */
  write(frame: string): boolean {
    if (this.ended) return false;
    const bytes = Buffer.byteLength(frame);
    if (this.#waiting > 0 && this.#waiting + bytes > this.#limits.maxBufferedBytes) {
      this.end('overflow');
      return false;
    }
    if (this.#sink) this.#send(frame);
    else {
      this.#queue.push(frame);
      this.#waiting += bytes;
      this.#armStall();
    }
    return true;
  }

  /** Writes `frame` only when nothing waits (keep-alive comments and parts). */
  writeIfIdle(frame: string): boolean {
    return this.#waiting === 0 && this.#sink !== undefined ? this.write(frame) : false;
  }

  /**
   * Resolves true once the stream can take the next result (little waits to be written), false
   * once it has ended: a producer stops pulling then.
   */
  ready(): Promise<boolean> {
    if (this.ended) return Promise.resolve(false);
    if (this.#sink && this.#waiting < READY_BYTES) return Promise.resolve(true);
    if (!this.#ready) {
      let resolve!: (open: boolean) => void;
      const promise = new Promise<boolean>((done) => {
        resolve = done;
      });
      this.#ready = { promise, resolve };
    }
    return this.#ready.promise;
  }

  /** Ends the stream for `reason` (once); waiting producers are told to stop. */
  end(reason: StreamEndReason): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#queue = [];
    clearTimeout(this.#stall);
    this.#settle();
    this.#onEnd(reason);
  }

  /** Stops the writer without ending the stream for a fault (the stream ended on its own). */
  close(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#queue = [];
    clearTimeout(this.#stall);
    this.#settle();
  }

  #send(frame: string): void {
    const sink = this.#sink as StreamSink;
    const bytes = Buffer.byteLength(frame);
    this.#waiting += bytes;
    this.#armStall();
    let called = false;
    sink.send(frame, () => {
      if (called) return;
      called = true;
      this.#waiting -= bytes;
      // Progress: the timer starts again for what still waits.
      clearTimeout(this.#stall);
      this.#stall = undefined;
      if (this.#waiting > 0) this.#armStall();
      this.#settle();
    });
  }

  #armStall(): void {
    if (this.#stall !== undefined || this.#ended) return;
    this.#stall = setTimeout(() => this.end('stalled'), this.#limits.writeTimeoutMs);
    this.#stall.unref?.();
  }

  /** Wakes waiting producers when they may go on, or must stop. */
  #settle(): void {
    if (!this.#ready) return;
    if (this.ended) {
      this.#ready.resolve(false);
      this.#ready = undefined;
    } else if (this.#sink && this.#waiting < READY_BYTES) {
      this.#ready.resolve(true);
      this.#ready = undefined;
    }
  }
}
