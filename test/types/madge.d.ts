/** madge ships no types: the part of its API the import-circle test uses. */
declare module 'madge' {
  interface MadgeConfig {
    fileExtensions?: string[];
    tsConfig?: string;
    detectiveOptions?: Record<string, unknown>;
  }
  interface MadgeResult {
    /** Each circle as the chain of files (relative to the base directory) that closes it. */
    circular(): string[][];
    obj(): Record<string, string[]>;
    warnings(): { skipped: string[] };
  }
  export default function madge(path: string, config?: MadgeConfig): Promise<MadgeResult>;
}
