export interface PublicPackage {
  readonly dir: string
  readonly short: string
  readonly manifest: { readonly name: string; readonly version?: string; readonly description?: string }
  readonly entries: ReadonlyArray<string>
  readonly modules: ReadonlyArray<string>
  readonly names: ReadonlyArray<{
    readonly name: string
    readonly via: string
    readonly namespace?: boolean
    readonly declaredName?: string
    readonly declaredIn?: string
  }>
}
export declare const publicPackages: (
  root: string,
) => ReadonlyArray<Pick<PublicPackage, "dir" | "short" | "manifest">>
export declare const entryPoints: (pkg: Pick<PublicPackage, "dir" | "manifest">) => ReadonlyArray<string>
export declare const publicSurface: (root: string) => ReadonlyArray<PublicPackage>
