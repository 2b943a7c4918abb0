// The only script of the panel: the copy button next to a token value shown once, the search
// fields of the token forms, and the live service page. Everything else works without
// JavaScript (a form's "Find" button sends it back to be shown with the matches; the service
// page shows what was true when it was loaded).
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
      if (cell && live[name] !== null) cell.textContent = String(live[name]);
    }
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
