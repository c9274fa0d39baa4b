export declare const root: string;
export declare function buildSampleApp(): void;
export declare function freePort(): Promise<number>;
export declare function startSampleApp(env: Record<string, string>): Promise<{
  base: string;
  output: string[];
  stop(): Promise<number | string>;
}>;
