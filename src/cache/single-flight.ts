/**
 * Single flight: concurrent calls for one key share one run of the work. The entry is removed
 * when the work settles, so a failure is never remembered.
 */
export class SingleFlight {
  readonly #inFlight = new Map<string, Promise<unknown>>();

  run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const existing = this.#inFlight.get(key);
    if (existing) return existing as Promise<T>;
    const promise = work().finally(() => this.#inFlight.delete(key));
    this.#inFlight.set(key, promise);
    return promise;
  }
}
