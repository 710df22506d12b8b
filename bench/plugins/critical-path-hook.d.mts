/** The spans (µs) from a message reaching JavaScript to the next write, collected since the last call. */
export declare function takeSpans(): number[];
