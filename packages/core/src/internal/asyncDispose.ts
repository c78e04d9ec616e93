/**
 * `Symbol.asyncDispose` on runtimes that predate explicit resource management (Node 20.0 to
 * 20.3, older browsers and workers). `await using` compiled by TypeScript or esbuild looks the
 * method up under that symbol; where the runtime has none, both, like core-js, agree on
 * `Symbol.for("Symbol.asyncDispose")`, so the polyfill registers that one.
 */

/** The symbol, defined on `symbols` (the global `Symbol`) first when it is missing. */
export const ensure = (symbols: SymbolConstructor = Symbol): typeof Symbol.asyncDispose => {
  if (typeof symbols.asyncDispose !== "symbol") {
    Object.defineProperty(symbols, "asyncDispose", {
      value: symbols.for("Symbol.asyncDispose"),
      writable: false,
      enumerable: false,
      configurable: false,
    })
  }
  return symbols.asyncDispose
}
