/** Types of ./calculator-decimal.mjs. */
export declare const MAX_DECIMAL_PLACES: number;
export declare function finiteDecimal(n: bigint, d: bigint): string | null;
