// The only script of the panel: the copy button next to a token value shown once, and the search
// fields of the token forms. Everything else works without JavaScript (a form's "Find" button
// sends it back to be shown with the matches).
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
    const { matches } = await response.json();
    if (ticket !== asked) return;
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
