// The only script of the panel: the copy button next to a token value shown once, the search
// fields of the token forms, the live service page, and the operation page that follows an
// action to its end. Everything else works without JavaScript (a form's "Find" button sends it
// back to be shown with the matches; the service page shows what was true when it was loaded;
// the operation page reloads itself until the operation ends).
document.querySelectorAll('[data-copy-target]').forEach((button) => {
  button.hidden = false;
  button.addEventListener('click', async () => {
    const field = document.getElementById(button.getAttribute('data-copy-target'));
    field.select();
    try {
      await navigator.clipboard.writeText(field.value);
    } catch {
      document.execCommand('copy');
    }
    button.textContent = 'Copied';
  });
});

// A search field of a token form asks the panel for the first matches as one types, and shows
// them below the boxes already ticked (which stay, whatever the search). Names go in as text.
document.querySelectorAll('[data-choices-search]').forEach((container) => {
  const kind = container.getAttribute('data-choices-search');
  const url = container.getAttribute('data-choices-url');
  const input = container.querySelector('input[type=search]');
  const button = container.querySelector('button');
  const list = container.closest('fieldset').querySelector(`[data-choices-list="${kind}"]`);
  const field = kind === 'services' ? 'services' : 'servers';
  let asked = 0;
  let timer;

  async function search() {
    const ticket = ++asked;
    const response = await fetch(`${url}?q=${encodeURIComponent(input.value)}`, { headers: { accept: 'application/json' }, credentials: 'same-origin' });
    if (!response.ok || ticket !== asked) return;
    const { matches, searched_all: searchedAll } = await response.json();
    if (ticket !== asked) return;
    const stopped = container.closest('fieldset').querySelector(`[data-choices-stopped="${kind}"]`);
    if (stopped) stopped.hidden = searchedAll !== false;
    const kept = new Set();
    list.querySelectorAll('label').forEach((label) => {
      const box = label.querySelector('input');
      if (box.checked) kept.add(box.value); else label.remove();
    });
    for (const match of matches) {
      if (kept.has(match.id)) continue;
      const label = document.createElement('label');
      label.className = 'implies';
      const box = document.createElement('input');
      box.type = 'checkbox';
      box.name = field;
      box.value = match.id;
      label.append(box, ` ${match.name}`);
      if (match.copies > 0) {
        const copies = document.createElement('span');
        copies.className = 'muted';
        copies.textContent = `(and ${match.copies} ${match.copies === 1 ? 'copy' : 'copies'})`;
        label.append(' ', copies);
      }
      list.append(label);
    }
    list.setAttribute('data-searched', input.value);
  }

  // With the script on, "Find" no longer sends the form, so Enter in any field still creates the token.
  button.type = 'button';
  button.addEventListener('click', () => { void search(); });
  input.addEventListener('keydown', (event) => {
    if (event.key === 'Enter') { event.preventDefault(); void search(); }
  });
  input.addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(() => { void search(); }, 200);
  });
});

// A service page refreshes its state, its metrics and its logs every few seconds, without a
// reload: it asks the panel for what changed, and adds the new log lines as text (never markup).
const LIVE_EVERY_MS = 3000;
const LOG_LINES_KEPT = 2000;
document.querySelectorAll('[data-live-service]').forEach((container) => {
  const url = container.getAttribute('data-live-url');
  let cursor = container.getAttribute('data-cursor');
  const logs = container.querySelector('[data-live="logs"]');

  async function refresh() {
    if (document.hidden) return;
    const query = cursor ? `?cursor=${encodeURIComponent(cursor)}` : '';
    const response = await fetch(url + query, { headers: { accept: 'application/json' }, credentials: 'same-origin' });
    if (!response.ok) return;
    const live = await response.json();
    for (const name of ['state', 'revision', 'reason']) {
      const cell = container.querySelector(`[data-live="${name}"]`);
      if (cell && cell.textContent !== String(live[name] ?? '—')) cell.textContent = String(live[name] ?? '—');
    }
    showAddress(container.querySelector('[data-live="address"]'), live.url);
    for (const [label, value] of Object.entries(live.metrics ?? {})) {
      const cell = container.querySelector(`[data-metric="${label}"]`);
      if (cell) cell.textContent = value;
    }
    if (logs && live.logs) {
      const atBottom = logs.scrollTop + logs.clientHeight >= logs.scrollHeight - 4;
      for (const line of live.logs.lines) {
        const span = document.createElement('span');
        span.textContent = `${line.container ? `[${line.container}] ` : ''}${line.at ? `${line.at} ` : ''}${line.text}\n`;
        logs.append(span);
      }
      while (logs.childElementCount > LOG_LINES_KEPT) logs.firstElementChild.remove();
      if (atBottom) logs.scrollTop = logs.scrollHeight;
      cursor = live.logs.next_cursor;
    }
  }

  async function loop() {
    try {
      await refresh();
    } catch {
      // A missed refresh (the server restarting) is tried again at the next tick.
    }
    setTimeout(() => { void loop(); }, LIVE_EVERY_MS);
  }
  setTimeout(() => { void loop(); }, LIVE_EVERY_MS);
});

// The service's address as a link that opens it, or a sentence while it has none; built as
// elements with the address as text and href, never as markup.
function showAddress(cell, url) {
  if (!cell) return;
  const link = cell.querySelector('a');
  if (url && link && link.getAttribute('href') === url) return;
  if (!url && !link) return;
  if (url) {
    const next = document.createElement('a');
    next.href = url;
    next.target = '_blank';
    next.rel = 'noopener noreferrer';
    next.textContent = url;
    cell.replaceChildren(next);
  } else {
    const none = document.createElement('span');
    none.className = 'muted';
    none.textContent = 'none while it is not running';
    cell.replaceChildren(none);
  }
}

// An operation page follows its operation: its state and steps every moment, and, once it has
// ended, the page again, which then says what it led to (and a create's credentials, once).
const FOLLOW_EVERY_MS = 1000;
document.querySelectorAll('[data-live-operation]').forEach((container) => {
  const url = container.getAttribute('data-live-url');
  const state = container.querySelector('[data-live="state"]');
  if (['succeeded', 'failed'].includes(state.textContent)) return;
  const reason = container.querySelector('[data-live="reason"]');
  const steps = container.querySelector('[data-live="steps"]');

  async function follow() {
    const response = await fetch(url, { headers: { accept: 'application/json' }, credentials: 'same-origin' });
    if (!response.ok) return false;
    const live = await response.json();
    if (state.textContent !== live.state) state.textContent = live.state;
    reason.textContent = live.reason ?? '—';
    if (live.steps.length > 0 && steps.childElementCount !== live.steps.length) {
      steps.replaceChildren(...live.steps.map((text) => {
        const item = document.createElement('li');
        item.textContent = text;
        return item;
      }));
    }
    return live.ended;
  }

  async function loop() {
    let ended = false;
    try {
      ended = await follow();
    } catch {
      // Asked again at the next tick.
    }
    if (ended) window.location.reload();
    else setTimeout(() => { void loop(); }, FOLLOW_EVERY_MS);
  }
  setTimeout(() => { void loop(); }, FOLLOW_EVERY_MS);
});
