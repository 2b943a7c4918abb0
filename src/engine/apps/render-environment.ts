// A container's environment with its `${NAME}` variables filled in: the driver's per-service
// values (secrets unsealed just before, the built-in TEAMINFRA_* values). Each value is one
// environment entry handed to the engine as it is, never through a shell, so a password with
// quotes or spaces stays what it is.
import type { AppContainer, Template } from './app-definition.js';

export function renderTemplate(template: Template, values: Readonly<Record<string, string>>): string {
  return template.map((part) => {
    if ('text' in part) return part.text;
    const value = values[part.variable];
    // The parse checked every name against the definition's secrets and the built-ins; one
    // missing here is the driver's omission, and running with an empty password would hide it.
    if (value === undefined) throw new Error(`No value for \${${part.variable}}: the driver must give every variable the definition names.`);
    return value;
  }).join('');
}

/** The engine's `Env` list (`KEY=value`) of a container. */
export function renderEnvironment(container: AppContainer, values: Readonly<Record<string, string>>): string[] {
  return Object.entries(container.environment).map(([key, template]) => `${key}=${renderTemplate(template, values)}`);
}
