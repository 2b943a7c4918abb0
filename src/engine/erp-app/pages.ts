// The ERP application's HTML pages. Every value is escaped; there is no script.
export function escapeHtml(value: string | number): string {
  return String(value).replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

function page(title: string, body: string): string {
  return `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head>` +
    `<body>${body}</body></html>\n`;
}

export interface HomeFigures {
  customers: number;
  products: number;
  salesOrders: number;
}

export function homePage(name: string, revision: number, figures: HomeFigures): string {
  return page(name, `<h1>${escapeHtml(name)}</h1>
<p>Deployed revision: <strong data-revision="${revision}">${revision}</strong></p>
<ul><li>Customers: ${figures.customers}</li><li>Products: ${figures.products}</li><li>Sales orders: ${figures.salesOrders}</li></ul>
<p><a href="/web/reset_password">Forgot your password?</a></p>`);
}

export function resetRequestPage(name: string, message?: string): string {
  return page(`Reset your password - ${name}`, `<h1>Reset your password</h1>
${message ? `<p role="status">${escapeHtml(message)}</p>` : ''}
<form method="post" action="/web/reset_password"><label>Login <input name="login" required></label>
<button type="submit">Send me a reset link</button></form>`);
}

export function newPasswordPage(name: string, token: string): string {
  return page(`Choose a new password - ${name}`, `<h1>Choose a new password</h1>
<form method="post" action="/web/set_password"><input type="hidden" name="token" value="${escapeHtml(token)}">
<label>New password <input type="password" name="password" minlength="8" required></label>
<button type="submit">Set password</button></form>`);
}

export function messagePage(name: string, title: string, message: string): string {
  return page(`${title} - ${name}`, `<h1>${escapeHtml(title)}</h1><p>${escapeHtml(message)}</p>`);
}
