/**
 * Live records in one process (no `CACHE_URL`): one poller per record, shared by this process's
 * subscribers, stopped as soon as the last of them leaves. Pushed records go straight to them.
 */
import {
  isLastEvent,
  kindOf,
  type LiveDeps,
  type LiveEvent,
  LiveHubBase,
  type LiveKind,
  type LiveListener,
  type LiveRecord,
  type LiveSource,
  type Poller,
  startPoller,
} from './hub.ts';

interface Watch {
  kind: LiveKind<LiveRecord>;
  listeners: Set<LiveListener>;
  stop: AbortController;
  poller: Poller;
}

/** The in-memory {@link LiveStatusHub}. */
export class MemoryLiveStatusHub extends LiveHubBase {
  /** By topic (see {@link LiveKind.topic}). */
  readonly #watches = new Map<string, Watch>();

  constructor(deps: LiveDeps) {
    super(deps);
  }

  protected async join(
    kind: LiveKind<LiveRecord>,
    id: string,
    listener: LiveListener,
  ): Promise<() => void> {
    const topic = kind.topic(id);
    let watch = this.#watches.get(topic);
    if (!watch) watch = this.#start(kind, id, topic);
    const current = watch;
    current.listeners.add(listener);
    return () => {
      current.listeners.delete(listener);
      if (current.listeners.size > 0) return;
      current.stop.abort();
      if (this.#watches.get(topic) === current) this.#watches.delete(topic);
    };
  }

  #start(kind: LiveKind<LiveRecord>, id: string, topic: string): Watch {
    const stop = new AbortController();
    const listeners = new Set<LiveListener>();
    const { observer } = this.deps;
    observer?.pollers(1);
    const poller = startPoller(this.deps, {
      kind,
      id,
      startedAt: Date.now(),
      // The subscriber has just read the record: the first poll is one interval later.
      firstDelayMs: this.deps.settings.pollMs,
      signal: stop.signal,
      publish: (event) => this.#deliver(watch, topic, event),
    });
    const watch: Watch = { kind, listeners, stop, poller };
    void poller.done.finally(() => {
      observer?.pollers(-1);
      if (this.#watches.get(topic) === watch) this.#watches.delete(topic);
    });
    this.#watches.set(topic, watch);
    return watch;
  }

  #deliver(watch: Watch, topic: string, event: LiveEvent): void {
    // A last event: later subscribers must start a new poller, not join this one.
    if (isLastEvent(watch.kind, event)) {
      if (this.#watches.get(topic) === watch) this.#watches.delete(topic);
      watch.stop.abort();
    }
    for (const listener of watch.listeners) listener(event);
    this.observePush(watch.kind.source, event, watch.listeners.size);
  }

  async push(source: LiveSource, id: string, record: LiveRecord, pushedAt: number): Promise<void> {
    const topic = kindOf(source).topic(id);
    const watch = this.#watches.get(topic);
    if (!watch) return;
    watch.poller.pushed(record);
    this.#deliver(watch, topic, { type: 'record', record, pushedAt });
  }

  async close(): Promise<void> {
    this.endWatches();
    const watches = [...this.#watches.values()];
    for (const watch of watches) watch.stop.abort();
    await Promise.allSettled(watches.map((watch) => watch.poller.done));
  }
}
