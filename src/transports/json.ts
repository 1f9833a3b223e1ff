/**
 * The JSON adapter: a single result of GraphQL over HTTP, answered
 * `application/graphql-response+json` or `application/json` as `Accept` asks (answer.ts). A
 * stream cannot be one JSON document: a subscription asked for without a streaming type is
 * refused (406) and asked for over a streaming transport. This file only frames.
 */
import type { ServerResponse } from 'node:http';
import { requestError } from '../errors.ts';
import type { AnswerType } from '../http/answer.ts';
import { writeResult } from './io.ts';
import type { OperationOutcome } from './operation.ts';

/** Writes `outcome` as one JSON answer of `type`. */
export function writeJson(res: ServerResponse, outcome: OperationOutcome, type: AnswerType): void {
  if (outcome.kind === 'result') {
    writeResult(res, outcome.result, type);
    return;
  }
  void outcome.stream.return();
  writeResult(
    res,
    {
      errors: [
        requestError(
          'A subscription needs a streaming answer: Accept text/event-stream or multipart/mixed, or a WebSocket.',
          'GRAPHQL_VALIDATION_FAILED',
          406,
        ),
      ],
    },
    type,
  );
}
