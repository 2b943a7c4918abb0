// The token settings form (create and Edit access): every setting of the spec, rendered with
// the current values and read back with errors a person can act on.
import { dateInTimeZone, isValidDate } from '../auth/expiry.js';
import { isPermissionId, PERMISSIONS, type PermissionId } from '../auth/permissions.js';
import { plainTextProblem } from '../core/plain-text.js';
import { APPROVABLE_ACTION_TITLES, APPROVABLE_ACTIONS, APPROVAL_ONLY_WHEN, isApprovableAction } from '../decisions/approvable.js';
import type { AccessSettings } from '../db/repositories/token-admin.js';
import type { AcceptedBy } from '../db/tables.js';
import { html, type Html } from './html.js';

/** What a form offers: the chosen services and servers, then the first matches of a search (token-choices.ts). */
export interface Choices {
  services: { id: string; name: string; copies: number }[];
  /** False when the services' search stopped before it read every name: the form says to type more. */
  servicesSearchedAll?: boolean;
  servers: { id: string; name: string }[];
}

/** Which of the submitted ids belong to the team, read by key before the form is parsed. */
export interface KnownChoices {
  services: ReadonlySet<string>;
  servers: ReadonlySet<string>;
}

export type FormBody = Record<string, string | string[] | undefined>;

const ACCEPTED_BY: { value: AcceptedBy; label: string }[] = [
  { value: 'api', label: 'REST API and command line' },
  { value: 'mcp', label: 'MCP server for AI assistants' },
  { value: 'both', label: 'Both' },
];

const asList = (value: string | string[] | undefined): string[] => (value === undefined ? [] : Array.isArray(value) ? value : [value]);

export function parseTokenForm(body: FormBody, known: KnownChoices, timeZone: string): { settings?: AccessSettings; errors: string[] } {
  const errors: string[] = [];
  const name = String(body.name ?? '').trim();
  if (name.length === 0 || name.length > 100) errors.push('Give the token a name of 1 to 100 characters.');
  const nameProblem = plainTextProblem(name);
  if (nameProblem) errors.push(`The name ${nameProblem}`);
  const expiresOn = String(body.expires_on ?? '').trim() || null;
  if (expiresOn !== null && !isValidDate(expiresOn)) errors.push('"Expires on" must be a date.');
  else if (expiresOn !== null && expiresOn < dateInTimeZone(new Date(), timeZone)) errors.push('"Expires on" is in the past; choose today or later.');
  const acceptedBy = ACCEPTED_BY.find((choice) => choice.value === body.accepted_by)?.value;
  if (!acceptedBy) errors.push('Choose which servers accept the token ("Accepted by").');
  const fullAccess = body.access !== 'selected';
  const permissions = asList(body.permissions).filter(isPermissionId) as PermissionId[];
  if (!fullAccess && permissions.length === 0) errors.push('Choose at least one permission, or Full access.');
  const serviceIds = body.restrict_services ? asList(body.services) : null;
  const serverIds = body.restrict_servers ? asList(body.servers) : null;
  if (serviceIds?.some((id) => !known.services.has(id))) errors.push('Choose ERP services of this team only.');
  if (serverIds?.some((id) => !known.servers.has(id))) errors.push('Choose servers of this team only.');
  if (serviceIds?.length === 0) errors.push('"Only specific ERP services" is ticked: choose at least one ERP service.');
  if (serverIds?.length === 0) errors.push('"Only specific servers" is ticked: choose at least one server.');
  // Checked here, not only by the checkboxes offered: a forged form must not store a name invoke() never looks for.
  const needsApproval = [...new Set(asList(body.needs_approval))];
  if (needsApproval.some((name) => !isApprovableAction(name))) {
    errors.push(`"Needs approval for" can name only these actions: ${Object.values(APPROVABLE_ACTION_TITLES).join(', ')}.`);
  }
  if (errors.length > 0 || !acceptedBy) return { errors };
  return { errors, settings: { name, expiresOn, acceptedBy, fullAccess, permissions, serviceIds, serverIds, needsApproval } };
}

export function settingsAsForm(settings: AccessSettings): FormBody {
  return {
    name: settings.name, expires_on: settings.expiresOn ?? '', accepted_by: settings.acceptedBy,
    access: settings.fullAccess ? 'full' : 'selected', permissions: [...settings.permissions],
    restrict_services: settings.serviceIds ? 'on' : undefined, services: [...(settings.serviceIds ?? [])],
    restrict_servers: settings.serverIds ? 'on' : undefined, servers: [...(settings.serverIds ?? [])],
    needs_approval: [...settings.needsApproval],
  };
}

export function tokenFormFields(values: FormBody, choices: Choices): Html {
  return html`${nameField(values)}${expiryField(values)}${acceptedByField(values)}${permissionsField(values)}${restrictionFields(values, choices)}${needsApprovalField(values)}`;
}

// The pieces of the form, also used by the consent page of an OAuth sign-in (which fixes
// "Accepted by" itself and so leaves that piece out).
const checked = (on: boolean) => (on ? html` checked` : '');
const chosen = (values: FormBody, field: string, value: string) => asList(values[field]).includes(value);

export function nameField(values: FormBody): Html {
  return html`
<fieldset><legend>Name</legend>
  <label>Name <input name="name" required maxlength="100" value="${values.name ?? ''}"></label>
</fieldset>`;
}

export function expiryField(values: FormBody): Html {
  return html`
<fieldset><legend>Expires on</legend>
  <label>Expires on <input type="date" name="expires_on" value="${values.expires_on ?? ''}"></label>
  <p class="muted">The token works until the end of that day. Empty means the token never expires.</p>
</fieldset>`;
}

export function acceptedByField(values: FormBody): Html {
  return html`
<fieldset><legend>Accepted by</legend>
  ${ACCEPTED_BY.map((choice) => html`<label><input type="radio" name="accepted_by" value="${choice.value}"${checked((values.accepted_by ?? 'both') === choice.value)}> ${choice.label}</label>`)}
</fieldset>`;
}

export function permissionsField(values: FormBody): Html {
  const groups = [...new Set(PERMISSIONS.map((permission) => permission.group))];
  const labelOf = (id: string) => PERMISSIONS.find((permission) => permission.id === id)?.label ?? id;
  return html`
<fieldset><legend>Permissions</legend>
  <label><input type="radio" name="access" value="full"${checked(values.access !== 'selected')}> Full access</label>
  <label><input type="radio" name="access" value="selected"${checked(values.access === 'selected')}> Selected permissions:</label>
  ${groups.map((group) => html`<fieldset><legend>${group}</legend>
    ${PERMISSIONS.filter((permission) => permission.group === group).map((permission) => html`
    <label><input type="checkbox" name="permissions" value="${permission.id}"${checked(chosen(values, 'permissions', permission.id))}>
      ${permission.label} <code class="muted">${permission.id}</code></label>
    ${permission.implies.length > 0 ? html`<div class="implies">Includes: ${permission.implies.map(labelOf).join(', ')}</div>` : ''}`)}
  </fieldset>`)}
</fieldset>`;
}

// The services and servers offered are the chosen ones and the first matches of a search, never
// the whole team. With scripts on, panel.js asks `data-choices-url` as one types and adds the
// matches; with scripts off, "Find" sends the form back to be shown again with them.
export function restrictionFields(values: FormBody, choices: Choices): Html {
  return html`
<fieldset><legend>Only specific ERP services</legend>
  <label><input type="checkbox" name="restrict_services" value="on"${checked(Boolean(values.restrict_services))}> Only specific ERP services (the token reaches them and their copies, and cannot create new ERP services)</label>
  ${choiceSearch('services', 'service_search', 'Find ERP services by name', values)}
  <p class="muted" data-choices-stopped="services"${choices.servicesSearchedAll === false ? '' : ' hidden'}>This search read only part of the team's ERP services: type more of the name.</p>
  <div class="choices" data-choices-list="services">
  ${choices.services.map((service) => html`<label class="implies"><input type="checkbox" name="services" value="${service.id}"${checked(chosen(values, 'services', service.id))}> ${service.name}${service.copies > 0 ? html` <span class="muted">(and ${service.copies} ${service.copies === 1 ? 'copy' : 'copies'})</span>` : ''}</label>`)}
  </div>
</fieldset>
<fieldset><legend>Only specific servers</legend>
  <label><input type="checkbox" name="restrict_servers" value="on"${checked(Boolean(values.restrict_servers))}> Only specific servers (the token cannot create new servers; which ERP services it reaches is set above)</label>
  ${choiceSearch('servers', 'server_search', 'Find servers by name', values)}
  <div class="choices" data-choices-list="servers">
  ${choices.servers.map((server) => html`<label class="implies"><input type="checkbox" name="servers" value="${server.id}"${checked(chosen(values, 'servers', server.id))}> ${server.name}</label>`)}
  </div>
</fieldset>`;
}

function choiceSearch(kind: 'services' | 'servers', field: string, label: string, values: FormBody): Html {
  const value = typeof values[field] === 'string' ? values[field] : '';
  return html`<p class="choice-search" data-choices-search="${kind}" data-choices-url="/panel/token-choices/${kind}">
    <label>${label} <input type="search" name="${field}" value="${value}" maxlength="100" autocomplete="off"></label>
    <button type="submit" name="find" value="${kind}" formnovalidate>Find</button></p>`;
}

export function needsApprovalField(values: FormBody): Html {
  return html`
<fieldset><legend>Needs approval for</legend>
  <p class="muted">A ticked action asked for with this token does not run at once: it waits on the Decisions page until a
  member (or another token) approves it, and fails if denied or left unanswered.</p>
  ${APPROVABLE_ACTIONS.map((action) => html`<label><input type="checkbox" name="needs_approval" value="${action}"${checked(chosen(values, 'needs_approval', action))}>
    ${APPROVABLE_ACTION_TITLES[action]}${APPROVAL_ONLY_WHEN[action] ? ` (${APPROVAL_ONLY_WHEN[action]})` : ''} <code class="muted">${action}</code></label>`)}
</fieldset>`;
}
