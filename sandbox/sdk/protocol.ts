/**
 * The shapes shared by the sandbox's stand-in of the KYC browser SDK (widget.ts, which runs in
 * the browser) and the sandbox endpoints it talks to (api.ts). Types only: the bundle of the
 * widget carries none of it.
 *
 * The provider documents the SDK's constructor, methods and option names
 * but not the shape of `msg` (onSuccess) or `error` (onFailed); the ones below are the
 * sandbox's, documented in sandbox/README.md.
 */

/** How one step of the widget asks for one check. */
export type SdkStepKind = 'choice' | 'text' | 'digits' | 'date';

/** One step of the widget: one check of the level, one field. */
export type SdkStep = {
  /** Name of the check recorded on the level (e.g. `gender`). */
  check: string;
  /** Heading of the step. */
  title: string;
  /** Label of the field (or legend of the choices). */
  label: string;
  /** A line under the field. */
  hint?: string;
  kind: SdkStepKind;
  /** The choices of a `choice` step. */
  options?: { value: string; label: string }[];
  /** Bounds of the answer's length (`text`, `digits`). */
  minLength?: number;
  maxLength?: number;
  /** The `autocomplete` token of the field. */
  autocomplete?: string;
};

/** A level as the widget walks through it. */
export type SdkLevel = {
  level: number;
  slug: string;
  name: string;
  steps: SdkStep[];
};

/** Body of `POST /sdk/v1/session` and the common part of `POST /sdk/v1/verify`. */
export type SdkSessionRequest = {
  slug: string;
  userRef: string;
  name: string;
  levelSlug: string;
};

/** Body of `POST /sdk/v1/verify`: one answer per step, keyed by check name. */
export type SdkVerifyRequest = SdkSessionRequest & {
  answers: Record<string, string>;
};

/** Why the flow failed; the `code` of {@link KycFailure}. */
export type KycErrorCode =
  /** The public key (first constructor argument) is not the business's. */
  | 'INVALID_PUBLIC_KEY'
  /** The business slug (second argument) is unknown. */
  | 'INVALID_SLUG'
  /** The level slug (fifth argument) is not a level of the business. */
  | 'INVALID_LEVEL'
  /** The userRef or name is missing or too long, or an answer is malformed. */
  | 'INVALID_INPUT'
  /** The checks were submitted and at least one was rejected. */
  | 'CHECK_REJECTED'
  /** The service could not be reached, or answered something unexpected. */
  | 'NETWORK_ERROR'
  /** The user closed the widget before the flow ended. */
  | 'USER_CANCELLED';

/** The outcome of one check. */
export type KycCheckOutcome = {
  name: string;
  passed: boolean;
  /** Why a check was rejected. */
  reason?: string;
};

/** The argument of `onSuccess(msg)`. */
export type KycSuccessMessage = {
  status: 'success';
  /** An identifier of this verification, for support requests. */
  verificationId: string;
  userRef: string;
  levelSlug: string;
  /** Number of the level that was verified. */
  level: number;
  levelName: string;
  /** The checks submitted, all passed. */
  checks: KycCheckOutcome[];
  /** When the service accepted the checks (ISO 8601, UTC). */
  verifiedAt: string;
};

/** The argument of `onFailed(error)`. */
export type KycFailure = {
  status: 'failed';
  code: KycErrorCode;
  /** A sentence for a person; never holds a key. */
  message: string;
  userRef: string;
  levelSlug: string;
  /** With `CHECK_REJECTED`: every submitted check and whether it passed. */
  checks?: KycCheckOutcome[];
};

/** The options of `kyc(options)`. */
export type KycOptions = {
  /** Show errors inside the widget (with "Try again"), or close it and only report them. Default true. */
  displayInKycError?: boolean;
  /** Show a "Done" button on the success screen; without it the page closes the widget. Default false. */
  displayKycButtonOnVerification?: boolean;
  onReady?: () => void;
  onSuccess?: (msg: KycSuccessMessage) => void;
  onFailed?: (error: KycFailure) => void;
};

/** What `new InitServiceKyc(...)` returns. */
export type KycService = {
  kyc(options?: KycOptions): void;
  close(): void;
};

/** Every answer of the sandbox's SDK endpoints. */
export type SdkApiAnswer<T> =
  | { error: false; message: string; data: T }
  | {
      error: true;
      code: KycErrorCode;
      message: string;
      data: { checks?: KycCheckOutcome[] } | null;
    };

/** `data` of a successful `POST /sdk/v1/session`. */
export type SdkSessionData = { business: string; level: SdkLevel };

/** `data` of a successful `POST /sdk/v1/verify`. */
export type SdkVerifyData = Omit<KycSuccessMessage, 'status'>;
