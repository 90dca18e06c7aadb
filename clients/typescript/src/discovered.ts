/** What the environment says about the daemon, as the command line finds it. */
export interface Discovered {
  /** `$WORKBENCH_URL`, when set. */
  url?: string;
  token?: string;
  /** Where the token came from (`WORKBENCH_TOKEN` or the token file's path). */
  tokenSource?: string;
}
