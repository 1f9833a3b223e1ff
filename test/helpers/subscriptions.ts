/** Collects a subscription's results through the sink that graphql-ws and graphql-sse share. */

export interface Sink<T> {
  next(value: T): void;
  error(error: unknown): void;
  complete(): void;
}

/** Every result until completion; the error instead when the operation fails. */
export function collectResults<T>(
  subscribe: (sink: Sink<T>) => unknown,
): Promise<{ results: T[]; error?: unknown }> {
  return new Promise((resolve) => {
    const results: T[] = [];
    subscribe({
      next: (value) => results.push(value),
      error: (error) => resolve({ results, error }),
      complete: () => resolve({ results }),
    });
  });
}
