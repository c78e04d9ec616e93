import type { PublicPackage } from "./exports.mjs"

export declare const generatedPage: (pkg: PublicPackage, out: string, file: string) => string
export declare const docgen: (pkg: PublicPackage, out: string) => Promise<ReadonlyArray<string>>
export declare const documentedNames: (file: string) => ReadonlySet<string> | undefined
export declare const missingExports: (
  pkg: PublicPackage,
  pageOf: (file: string) => ReadonlySet<string> | undefined,
) => ReadonlyArray<string>
