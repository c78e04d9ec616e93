export declare const prose: (text: string) => ReadonlyArray<string>
export declare const slugger: () => (heading: string) => string
export declare const markdownAnchors: (text: string) => ReadonlySet<string>
export declare const markdownLinks: (text: string) => ReadonlyArray<string>
export declare const htmlLinks: (text: string) => ReadonlyArray<string>
export declare const htmlAnchors: (text: string) => ReadonlySet<string>
export declare const brokenLinks: (
  file: string,
  options: {
    readonly linksOf: (text: string) => ReadonlyArray<string>
    readonly anchorsOf: (text: string) => ReadonlySet<string>
    readonly kind: string
  },
) => ReadonlyArray<string>
