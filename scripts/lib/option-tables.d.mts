export declare const OPTION_PAGES: string[];
export declare function renderTable(name: string): string;
export declare function renderOptionTables(page: string): Promise<string>;
