/**
 * Live status in one process (no `CACHE_URL`): one poller per txRef, shared by this process's
 * subscribers, stopped as soon as the last of them leaves.
 */
import { isLastEvent, type LiveDeps, LiveHubBase, type LiveListener, runPoller } from './hub.ts';

interface Watch {
  listeners: Set<LiveListener>;
  stop: AbortController;
  done: Promise<void>;
}

/** The in-memory {@link LiveStatusHub}. */
export class MemoryLiveStatusHub extends LiveHubBase {
  readonly #watches = new Map<string, Watch>();

  constructor(deps: LiveDeps) {
    super(deps);
  }

  protected async join(txRef: string, listener: LiveListener): Promise<() => void> {
    let watch = this.#watches.get(txRef);
    if (!watch) watch = this.#start(txRef);
    const current = watch;
    current.listeners.add(listener);
    return () => {
      current.listeners.delete(listener);
      if (current.listeners.size > 0) return;
      current.stop.abort();
      if (this.#watches.get(txRef) === current) this.#watches.delete(txRef);
    };
  }

  #start(txRef: string): Watch {
    const stop = new AbortController();
    const listeners = new Set<LiveListener>();
    const { observer } = this.deps;
    observer?.pollers(1);
    const done = runPoller(this.deps, {
      txRef,
      startedAt: Date.now(),
      // The subscriber has just read the record: the first poll is one interval later.
      firstDelayMs: this.deps.settings.pollMs,
      signal: stop.signal,
      publish: (event) => {
        // A last event: later subscribers must start a new poller, not join this one.
        if (isLastEvent(event) && this.#watches.get(txRef) === watch) this.#watches.delete(txRef);
        for (const listener of listeners) listener(event);
      },
    }).finally(() => {
      observer?.pollers(-1);
      if (this.#watches.get(txRef) === watch) this.#watches.delete(txRef);
    });
    const watch: Watch = { listeners, stop, done };
    this.#watches.set(txRef, watch);
    return watch;
  }

  async close(): Promise<void> {
    this.endWatches();
    const watches = [...this.#watches.values()];
    for (const watch of watches) watch.stop.abort();
    await Promise.allSettled(watches.map((watch) => watch.done));
  }
}
