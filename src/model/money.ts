/**
 * Rounds an amount to the cent, half away from zero, on its decimal digits rather than on the
 * binary value (so 1.005 becomes 1.01, where `Math.round(1.005 * 100) / 100` gives 1).
 */
export function toCents(value: number): number {
  // Most amounts already are the double nearest to a whole number of cents.
  const scaled = value * 100;
  if (Number.isInteger(scaled) && scaled / 100 === value) return value;
  const text = Math.abs(value).toString();
  // Exponent notation: either at least 1e21 (already whole, and * 100 would lose digits) or
  // below 1e-6 (which rounds to zero).
  if (text.includes('e')) return Math.abs(value) >= 1 ? value : 0;
  const [whole = '0', fraction = ''] = text.split('.');
  let cents = BigInt(whole + `${fraction}00`.slice(0, 2));
  if ((fraction[2] ?? '0') >= '5') cents += 1n;
  const rounded = Number(cents) / 100;
  return value < 0 && rounded !== 0 ? -rounded : rounded;
}
