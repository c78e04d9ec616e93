export declare class ExampleError extends Error {}
export declare const marker: RegExp
export interface Example {
  readonly name: string
  readonly where: string
  readonly language: "ts" | "sh"
  readonly source: string
  readonly compileOnly: boolean
  readonly needsDatabase: boolean
  readonly nodenextOnly: boolean
  readonly prints: ReadonlyArray<string>
  /** The file name its text tells a reader to save it under (`file F`). */
  readonly file: string | undefined
  /** The command its text tells a reader to run it with (`run COMMAND`). */
  readonly runBy: string | undefined
}
export declare const readmes: () => ReadonlyArray<string>
export declare const examplesOf: (file: string) => ReadonlyArray<Example>
export declare const collectExamples: () => ReadonlyArray<Example>
