// A minimal browser for the panel over plain HTTP: keeps cookies, does not follow redirects,
// signs in through the real form, and reads the CSRF token of a page.
export class Visitor {
  cookies = new Map<string, string>();
  constructor(private readonly baseUrl: string) {}

  /** `form` as pairs when a field repeats (checkboxes). */
  async request(method: string, path: string, form?: Record<string, string> | [string, string][], headers: Record<string, string> = {}) {
    const response = await fetch(this.baseUrl + path, {
      method, redirect: 'manual',
      headers: {
        cookie: [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; '),
        ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
        ...headers,
      },
      body: form ? new URLSearchParams(form).toString() : undefined,
    });
    for (const header of response.headers.getSetCookie()) {
      const [pair] = header.split(';');
      const [name, value] = (pair as string).split('=');
      if (/Max-Age=0/.test(header)) this.cookies.delete(name as string);
      else this.cookies.set(name as string, value as string);
    }
    return { status: response.status, location: response.headers.get('location'), headers: response.headers, text: await response.text() };
  }

  async signIn(email: string, password: string) {
    const form = await this.request('GET', '/panel/sign-in');
    const secret = /name="_signin" value="([^"]+)"/.exec(form.text)?.[1] as string;
    return this.request('POST', '/panel/sign-in', { _signin: secret, email, password, next: '/panel' });
  }

  csrfFrom(text: string): string {
    return /name="_csrf" value="([^"]+)"/.exec(text)?.[1] as string;
  }
}
