/**
 * The sandbox's stand-in of the provider's KYC browser SDK. This file runs
 * in the browser: `npm run build:web` bundles it into generated/kyc-sdk.js, which the sandbox
 * serves at `/sdk/kyc.js`.
 *
 * `new InitServiceKyc(public_key, slug, userRef, name, levelSlug)` returns an object with
 * `kyc(options)`, which opens a modal dialog over the page that walks the user through the
 * checks of the level, and `close()`, which removes it. The widget talks to the sandbox next
 * to the script (`<script origin>/sdk/v1/…`) with the public key only. The shapes of `msg`
 * and `error` are in protocol.ts and sandbox/README.md.
 */
import type {
  KycErrorCode,
  KycFailure,
  KycOptions,
  KycService,
  KycSuccessMessage,
  SdkApiAnswer,
  SdkLevel,
  SdkSessionData,
  SdkSessionRequest,
  SdkStep,
  SdkVerifyData,
  SdkVerifyRequest,
} from './protocol.ts';

type Init = { publicKey: string; slug: string; userRef: string; name: string; levelSlug: string };

// Read while the script runs: `currentScript` is null afterwards. The endpoints and the
// stylesheet sit next to the script, wherever it was loaded from.
const SCRIPT = document.currentScript;
const BASE = new URL(
  './',
  SCRIPT instanceof HTMLScriptElement && SCRIPT.src !== '' ? SCRIPT.src : location.href,
);
const RETRYABLE: ReadonlySet<KycErrorCode> = new Set(['CHECK_REJECTED', 'NETWORK_ERROR']);

let instances = 0;

/** Adds the widget's stylesheet once; resolves when it loaded (or failed: the widget still works). */
function stylesheet(): Promise<void> {
  const href = new URL('kyc.css', BASE).href;
  const existing = document.querySelector<HTMLLinkElement>('link[data-kyc-sdk]');
  // Settled either way: a link that failed fires no event again, so waiting would hang.
  if (existing?.dataset.settled !== undefined) return Promise.resolve();
  const link = existing ?? document.createElement('link');
  const loaded = new Promise<void>((resolve) => {
    const settle = (outcome: string) => (): void => {
      link.dataset.settled = outcome;
      resolve();
    };
    link.addEventListener('load', settle('loaded'), { once: true });
    link.addEventListener('error', settle('failed'), { once: true });
  });
  if (existing === null) {
    link.rel = 'stylesheet';
    link.href = href;
    link.dataset.kycSdk = '';
    document.head.append(link);
  }
  return loaded;
}

/** Creates an element with a class and text. */
function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  className?: string,
  text?: string,
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (className !== undefined) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function button(
  text: string,
  kind: 'primary' | 'secondary',
  onClick?: () => void,
): HTMLButtonElement {
  const b = el('button', `skyc-button skyc-${kind}`, text);
  b.type = onClick === undefined ? 'submit' : 'button';
  if (onClick !== undefined) b.addEventListener('click', onClick);
  return b;
}

/** Runs a merchant callback; an exception in it must not break the widget. */
function call<A extends unknown[]>(fn: ((...args: A) => void) | undefined, ...args: A): void {
  if (typeof fn !== 'function') return;
  try {
    fn(...args);
  } catch (error) {
    console.error('KYC SDK: a callback threw', error);
  }
}

/** One run of the flow, from `kyc()` to its end or `close()`. */
class Flow {
  readonly #init: Init;
  readonly #options: KycOptions;
  readonly #onEnd: () => void;
  readonly #controller = new AbortController();
  readonly #id = `skyc-${++instances}`;
  readonly #dialog = el('dialog', 'skyc');
  readonly #subtitle = el('p', 'skyc-subtitle');
  readonly #body = el('div', 'skyc-body');
  #returnFocus: Element | null = null;
  #level: SdkLevel | undefined;
  #answers: Record<string, string> = {};
  #ready = false;
  /** Set once the flow reported its end (success or a failure not followed by a new attempt). */
  #reported = false;
  #ended = false;

  constructor(init: Init, options: KycOptions, onEnd: () => void) {
    this.#init = init;
    this.#options = options;
    this.#onEnd = onEnd;
  }

  get #showErrors(): boolean {
    return this.#options.displayInKycError !== false;
  }

  /** Opens the dialog and starts a session with the service. */
  open(): void {
    this.#returnFocus = document.activeElement;
    const dialog = this.#dialog;
    const title = el('h2', 'skyc-title', 'Verify your identity');
    title.id = `${this.#id}-title`;
    this.#subtitle.id = `${this.#id}-subtitle`;
    dialog.setAttribute('aria-labelledby', title.id);
    dialog.setAttribute('aria-describedby', this.#subtitle.id);
    dialog.dataset.kycSdk = 'widget';
    const close = button('×', 'secondary', () => this.#cancel());
    close.className = 'skyc-close';
    close.setAttribute('aria-label', 'Close verification');
    const header = el('header', 'skyc-header');
    header.append(title, close);
    const footer = el('p', 'skyc-footer', 'Sandbox of the KYC service: no real check is made.');
    dialog.append(header, this.#subtitle, this.#body, footer);
    // Escape closes a modal dialog; make it a cancellation that also removes the widget.
    dialog.addEventListener('cancel', (event) => {
      event.preventDefault();
      this.#cancel();
    });
    document.body.append(dialog);
    dialog.showModal();
    this.#start();
  }

  /** Removes the widget without calling back (the merchant's `close()`). */
  destroy(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#controller.abort();
    if (this.#dialog.open) this.#dialog.close();
    this.#dialog.remove();
    const back = this.#returnFocus;
    if (back instanceof HTMLElement && back.isConnected) back.focus();
    this.#onEnd();
  }

  #cancel(): void {
    const report = !this.#reported;
    this.destroy();
    if (report) {
      call(
        this.#options.onFailed,
        this.#failure('USER_CANCELLED', 'The user closed the verification.'),
      );
    }
  }

  #failure(code: KycErrorCode, message: string, checks?: KycFailure['checks']): KycFailure {
    return {
      status: 'failed',
      code,
      message,
      userRef: this.#init.userRef,
      levelSlug: this.#init.levelSlug,
      ...(checks !== undefined && { checks }),
    };
  }

  async #post<T>(path: string, body: object): Promise<SdkApiAnswer<T>> {
    let response: Response;
    try {
      response = await fetch(new URL(path, BASE), {
        method: 'POST',
        mode: 'cors',
        credentials: 'omit',
        headers: { 'content-type': 'application/json', 'x-public-key': this.#init.publicKey },
        body: JSON.stringify(body),
        signal: this.#controller.signal,
      });
      const answer = (await response.json()) as SdkApiAnswer<T>;
      if (typeof answer === 'object' && answer !== null && typeof answer.error === 'boolean') {
        return answer;
      }
    } catch (error) {
      if (this.#controller.signal.aborted) throw error;
    }
    return {
      error: true,
      code: 'NETWORK_ERROR',
      message: 'The verification service could not be reached. Try again.',
      data: null,
    };
  }

  #common(): SdkSessionRequest {
    const { slug, userRef, name, levelSlug } = this.#init;
    return { slug, userRef, name, levelSlug };
  }

  #start(): void {
    this.#reported = false;
    this.#answers = {};
    this.#busy('Connecting to the verification service…');
    Promise.all([stylesheet(), this.#post<SdkSessionData>('v1/session', this.#common())]).then(
      ([, answer]) => {
        if (this.#ended) return;
        if (answer.error) {
          this.#fail(this.#failure(answer.code, answer.message));
          return;
        }
        this.#level = answer.data.level;
        this.#step(0);
        if (!this.#ready) {
          this.#ready = true;
          call(this.#options.onReady);
        }
      },
      () => {},
    );
  }

  #busy(text: string): void {
    const status = el('p', 'skyc-busy', text);
    status.setAttribute('role', 'status');
    this.#body.replaceChildren(status);
    this.#body.setAttribute('aria-busy', 'true');
  }

  #step(index: number): void {
    const level = this.#level;
    const step = level?.steps[index];
    if (level === undefined || step === undefined) return;
    const last = index === level.steps.length - 1;
    this.#body.removeAttribute('aria-busy');
    this.#subtitle.textContent = `${level.name} (${level.slug}) · step ${index + 1} of ${level.steps.length}`;

    const form = el('form', 'skyc-form');
    form.noValidate = true;
    const heading = el('h3', 'skyc-step-title', step.title);
    const error = el('p', 'skyc-field-error');
    error.id = `${this.#id}-error-${index}`;
    error.setAttribute('aria-live', 'assertive');
    const field = this.#field(step, index, error.id);
    const actions = el('div', 'skyc-actions');
    if (index > 0) actions.append(button('Back', 'secondary', () => this.#step(index - 1)));
    actions.append(button(last ? 'Submit' : 'Continue', 'primary'));
    form.append(heading, field.node, error, actions);
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      const value = field.value();
      const problem = this.#check(step, value);
      if (problem !== undefined) {
        error.textContent = problem;
        field.focus();
        return;
      }
      this.#answers[step.check] = value;
      if (last) {
        void this.#submit();
      } else {
        this.#step(index + 1);
      }
    });
    this.#body.replaceChildren(form);
    field.focus();
  }

  /** The input of one step, prefilled with an earlier answer (after Back). */
  #field(
    step: SdkStep,
    index: number,
    errorId: string,
  ): { node: HTMLElement; value: () => string; focus: () => void } {
    const id = `${this.#id}-field-${index}`;
    const previous = this.#answers[step.check] ?? '';
    if (step.kind === 'choice') {
      const set = el('fieldset', 'skyc-choices');
      set.append(el('legend', 'skyc-label', step.label));
      set.setAttribute('aria-describedby', errorId);
      const radios = (step.options ?? []).map((option, i) => {
        const label = el('label', 'skyc-choice');
        const radio = el('input');
        radio.type = 'radio';
        radio.name = id;
        radio.id = `${id}-${i}`;
        radio.value = option.value;
        radio.checked = option.value === previous;
        label.append(radio, document.createTextNode(` ${option.label}`));
        set.append(label);
        return radio;
      });
      return {
        node: set,
        value: () => radios.find((r) => r.checked)?.value ?? '',
        focus: () => (radios.find((r) => r.checked) ?? radios[0])?.focus(),
      };
    }
    const wrap = el('div', 'skyc-field');
    const label = el('label', 'skyc-label', step.label);
    label.htmlFor = id;
    const input = el('input', 'skyc-input');
    input.id = id;
    input.name = step.check;
    input.type = step.kind === 'date' ? 'date' : 'text';
    if (step.kind === 'digits') input.inputMode = 'numeric';
    if (step.maxLength !== undefined) input.maxLength = step.maxLength;
    if (step.autocomplete !== undefined) input.autocomplete = step.autocomplete as AutoFill;
    input.required = true;
    input.value = previous;
    const described = [errorId];
    wrap.append(label, input);
    if (step.hint !== undefined) {
      const hint = el('p', 'skyc-hint', step.hint);
      hint.id = `${id}-hint`;
      described.unshift(hint.id);
      wrap.append(hint);
    }
    input.setAttribute('aria-describedby', described.join(' '));
    return { node: wrap, value: () => input.value.trim(), focus: () => input.focus() };
  }

  /** The same rules as the service's, so that a person learns of a typo at once. */
  #check(step: SdkStep, value: string): string | undefined {
    if (value === '')
      return step.kind === 'choice' ? 'Choose one option.' : 'This field is required.';
    if (step.kind === 'digits' && !/^\d+$/.test(value)) return 'Enter digits only.';
    const min = step.minLength ?? 1;
    if (step.kind === 'digits' && value.length !== min) return `Enter ${min} digits.`;
    if (value.length < min) return `Enter at least ${min} characters.`;
    return undefined;
  }

  async #submit(): Promise<void> {
    this.#busy('Checking your details…');
    let answer: SdkApiAnswer<SdkVerifyData>;
    try {
      const body: SdkVerifyRequest = { ...this.#common(), answers: this.#answers };
      answer = await this.#post<SdkVerifyData>('v1/verify', body);
    } catch {
      return;
    }
    if (this.#ended) return;
    if (answer.error) {
      this.#fail(this.#failure(answer.code, answer.message, answer.data?.checks));
      return;
    }
    this.#succeed({ status: 'success', ...answer.data });
  }

  #succeed(msg: KycSuccessMessage): void {
    this.#reported = true;
    this.#body.removeAttribute('aria-busy');
    this.#subtitle.textContent = `${msg.levelName} (${msg.levelSlug})`;
    const done = el('div', 'skyc-result skyc-success');
    done.setAttribute('role', 'status');
    done.append(
      el('h3', 'skyc-step-title', 'Verified'),
      el('p', undefined, `${msg.levelName} (${msg.levelSlug}) is verified. Thank you.`),
    );
    this.#body.replaceChildren(done);
    if (this.#options.displayKycButtonOnVerification === true) {
      const ok = button('Done', 'primary', () => this.destroy());
      const actions = el('div', 'skyc-actions');
      actions.append(ok);
      this.#body.append(actions);
      ok.focus();
    } else {
      // No button of its own: the page closes the widget; until then Escape or × can.
      this.#dialog.querySelector<HTMLButtonElement>('.skyc-close')?.focus();
    }
    call(this.#options.onSuccess, msg);
  }

  #fail(failure: KycFailure): void {
    this.#reported = true;
    if (!this.#showErrors) {
      this.destroy();
      call(this.#options.onFailed, failure);
      return;
    }
    this.#body.removeAttribute('aria-busy');
    const level = this.#level;
    this.#subtitle.textContent = level === undefined ? '' : `${level.name} (${level.slug})`;
    const box = el('div', 'skyc-result skyc-error');
    box.setAttribute('role', 'alert');
    box.append(
      el('h3', 'skyc-step-title', 'Verification failed'),
      el('p', undefined, failure.message),
    );
    const rejected = (failure.checks ?? []).filter((c) => !c.passed);
    if (rejected.length > 0) {
      const list = el('ul', 'skyc-reasons');
      for (const check of rejected) list.append(el('li', undefined, check.reason ?? check.name));
      box.append(list);
    }
    const actions = el('div', 'skyc-actions');
    actions.append(button('Close', 'secondary', () => this.destroy()));
    if (RETRYABLE.has(failure.code)) {
      actions.append(button('Try again', 'primary', () => this.#start()));
    }
    this.#body.replaceChildren(box, actions);
    (
      actions.querySelector<HTMLButtonElement>('.skyc-primary') ?? actions.querySelector('button')
    )?.focus();
    call(this.#options.onFailed, failure);
  }
}

/** The object returned by `InitServiceKyc`. */
class KycWidget implements KycService {
  readonly #init: Init;
  #flow: Flow | undefined;

  constructor(init: Init) {
    this.#init = init;
  }

  kyc(options: KycOptions = {}): void {
    // One widget at a time: a second kyc() replaces the first, silently.
    this.close();
    const flow = new Flow(this.#init, options ?? {}, () => {
      if (this.#flow === flow) this.#flow = undefined;
    });
    this.#flow = flow;
    flow.open();
  }

  close(): void {
    this.#flow?.destroy();
    this.#flow = undefined;
  }
}

/**
 * The SDK's global constructor, positional as in the spec. Works with or without `new`
 * (a constructor function that returns an object yields that object).
 */
function InitServiceKyc(
  public_key: string,
  slug: string,
  userRef: string,
  name: string,
  levelSlug: string,
): KycService {
  return new KycWidget({
    publicKey: String(public_key),
    slug: String(slug),
    userRef: String(userRef),
    name: String(name),
    levelSlug: String(levelSlug),
  });
}

(window as Window & { InitServiceKyc?: typeof InitServiceKyc }).InitServiceKyc = InitServiceKyc;
