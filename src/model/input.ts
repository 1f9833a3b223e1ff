/** Checks of client arguments, made before any loader or upstream is touched. */
import { BadUserInputError } from '../errors.ts';
import { TX_REF } from './records.ts';

/** Whether `txRef` is `NT-` followed by 1 to 64 letters and digits. */
export function isTxRef(txRef: string): boolean {
  return TX_REF.test(txRef);
}

/** Throws BAD_USER_INPUT unless `txRef` is `NT-` followed by letters and digits. */
export function checkTxRef(txRef: string): string {
  if (!isTxRef(txRef)) {
    throw new BadUserInputError(
      'txRef must be "NT-" followed by 1 to 64 letters or digits, e.g. NT-SUCCESS001.',
    );
  }
  return txRef;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses
const CONTROL = /[\u0000-\u001f\u007f]/;

/** Throws BAD_USER_INPUT unless the text is 1 to `max` characters without control characters. */
export function checkText(name: string, value: string, max: number): string {
  if (value.length === 0 || value.length > max || CONTROL.test(value)) {
    throw new BadUserInputError(
      `${name} must be 1 to ${max} characters without control characters.`,
    );
  }
  return value;
}

/** Throws BAD_USER_INPUT unless the level slug has the form tier_<n>. */
export function checkLevelSlug(levelSlug: string): string {
  if (!/^tier_\d{1,3}$/.test(levelSlug)) {
    throw new BadUserInputError('levelSlug must have the form tier_<n>, e.g. tier_1.');
  }
  return levelSlug;
}
