// The only script of the panel: the copy button next to a token value shown once.
// Everything else works without JavaScript.
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
