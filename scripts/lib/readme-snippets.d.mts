export declare const root: string;
export declare function readmeFormOf(source: string): string;
export declare function readmeSnippets(readme?: string): Array<{ file: string; code: string }>;
export declare function renderReadme(readme?: string): string;
export declare function docFiles(): string[];
export declare function allSnippets(): Array<{ page: string; file: string; code: string }>;
