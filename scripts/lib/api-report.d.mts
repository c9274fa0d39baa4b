export declare function entryPoints(): Array<{ name: string; types: string }>;
export declare function buildDeclarations(outDir: string): void;
export declare function checkApiReports(options: { update: boolean; declarations: string }): string[];
