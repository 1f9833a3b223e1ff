/**
 * Long-lived resources per caller: WebSocket connections and graphql-sse
 * reservations together count against `CONNECTIONS_MAX_PER_CALLER`. A slot is taken when the
 * connection or reservation is made and given back, once, however it ends.
 */
import { CallerSlots, type Release } from '../live/slots.ts';

export class ConnectionSlots {
  readonly #max: number;
  readonly #slots = new CallerSlots();

  constructor(maxPerCaller: number) {
    this.#max = maxPerCaller;
  }

  /** A slot for `caller`, as the function that gives it back; undefined when it holds its most. */
  take(caller: string): Release | undefined {
    return this.#slots.take(caller, this.#max);
  }

  /** Slots `caller` holds now. */
  held(caller: string): number {
    return this.#slots.held(caller);
  }

  /** Slots held, all callers together (metrics). */
  get total(): number {
    return this.#slots.total;
  }
}
