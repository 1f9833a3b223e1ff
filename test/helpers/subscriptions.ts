/** Collects a subscription's results through the sink that graphql-ws and graphql-sse share. */
import type { FormattedExecutionResult } from 'graphql';

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

/** What graphql-ws's and graphql-sse's clients both offer. */
export interface SubscribingClient {
  subscribe(
    payload: { query: string; variables: Record<string, unknown> },
    sink: Sink<never>,
  ): unknown;
}

/** Every result of one operation of `client`, until it completes (or fails: the error is returned). */
export function collect<T = FormattedExecutionResult>(
  client: SubscribingClient,
  query: string,
  variables: Record<string, unknown> = {},
): Promise<{ results: T[]; error?: unknown }> {
  return collectResults<T>((sink) => client.subscribe({ query, variables }, sink as Sink<never>));
}
