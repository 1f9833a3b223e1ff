/** Reading the card expiry `MM/YY` (`Card.expiryMonth`, `Card.expiryYear`). */

export interface Expiry {
  month: number;
  /** Four digits. */
  year: number;
}

/** Month and four-digit year of `MM/YY` (also `MM/YYYY`, `MM-YY`), or undefined. */
export function parseExpiry(text: string | null): Expiry | undefined {
  if (text === null) return undefined;
  const match = /^\s*(\d{1,2})\s*[/-]\s*(\d{2}|\d{4})\s*$/.exec(text);
  if (!match?.[1] || !match[2]) return undefined;
  const month = Number(match[1]);
  if (month < 1 || month > 12) return undefined;
  const year = match[2].length === 2 ? 2000 + Number(match[2]) : Number(match[2]);
  return { month, year };
}
