/** Made by the site's build (src/playground/build.ts): cclab's sources by repository path, no extension. */
declare module "cclab-playground:modules" {
  export const MODULES: Readonly<Record<string, Record<string, unknown>>>;
}
