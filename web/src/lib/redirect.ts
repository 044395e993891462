/** Sends the browser to another site (a sign-in provider). Its own module so tests can mock it. */
export function redirectTo(url: string): void {
  window.location.assign(url);
}
