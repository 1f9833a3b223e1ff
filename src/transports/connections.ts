/**
 * Long-lived resources per caller (contract §9): WebSocket connections and graphql-sse
 * reservations together count against `CONNECTIONS_MAX_PER_CALLER`. A slot is taken when the
 * connection or reservation is made and given back, once, however it ends.
 */
export class ConnectionSlots {
  readonly #max: number;
  readonly #held = new Map<string, number>();
  #total = 0;

  constructor(maxPerCaller: number) {
    this.#max = maxPerCaller;
  }

  /** A slot for `caller`, as the function that gives it back; undefined when it holds its most. */
  take(caller: string): (() => void) | undefined {
    const held = this.#held.get(caller) ?? 0;
    if (held >= this.#max) return undefined;
    this.#held.set(caller, held + 1);
    this.#total += 1;
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.#total -= 1;
      const left = (this.#held.get(caller) ?? 1) - 1;
      if (left > 0) this.#held.set(caller, left);
      else this.#held.delete(caller);
    };
  }

  /** Slots `caller` holds now. */
  held(caller: string): number {
    return this.#held.get(caller) ?? 0;
  }

  /** Slots held, all callers together (metrics). */
  get total(): number {
    return this.#total;
  }
}
