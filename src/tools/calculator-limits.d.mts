/** Types of ./calculator-limits.mjs. */
export declare const MAX_BITS: number;
export declare const MAX_DENOMINATOR_BITS: number;
export declare const MAX_FACTORIAL: number;
export declare const MAX_EXPRESSION_CHARS: number;
