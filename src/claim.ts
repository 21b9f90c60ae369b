/**
 * The mark of a payload that carries conversation text (issue 22): the claim-check codec
 * (src/infra/claim-check.ts) sends every payload whose JSON has this key by reference, whatever
 * its size. Spread it into the value (`{ ...CLAIM, reply }`); without a claim-check codec it is an
 * ignored field. Pure and dependency-free: workflows, activities and clients all import it.
 */
export const CLAIM = { $claim: true } as const;

/** A value that may carry the mark. */
export type Claimed = { $claim?: true };
