import { parseExpiry } from '../../../model/card.ts';
import type { CardResolvers } from '../../generated/resolvers-types.ts';

/** The digits were already cut to 6 + 4 when the upstream answer was validated. */
export const Card: CardResolvers = {
  first6: (card) => card.first,
  last4: (card) => card.last,
  expiryMonth: (card) => parseExpiry(card.expiry)?.month ?? null,
  expiryYear: (card) => parseExpiry(card.expiry)?.year ?? null,
  masked: (card) =>
    card.first === null || card.last === null ? null : `${card.first}******${card.last}`,
};
