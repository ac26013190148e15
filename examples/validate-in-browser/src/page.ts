// The page: an author drops (or picks) a plugin folder, a .zip or a .tar.gz, and sees what a
// conformant client would load and every finding, grouped by file. Everything runs here, in
// the browser: the page's Content-Security-Policy has `connect-src 'none'`, so nothing can
// leave it. The DOM is built with createElement and textContent only: a finding's message
// never becomes markup.
import {
  type Finding,
  type PackageUpload,
  type PluginValidation,
  type UploadedFile,
  explain,
  readTarGz,
  readUploadedFiles,
  readZip,
  validatePlugin,
} from '@agentproto/agent-plugins';

function element<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  text?: string,
  attributes: Record<string, string> = {},
): HTMLElementTagNameMap[K] {
  const made = document.createElement(tag);
  if (text !== undefined) made.textContent = text;
  for (const [name, value] of Object.entries(attributes)) made.setAttribute(name, value);
  return made;
}

function byId<T extends HTMLElement>(id: string): T {
  const found = document.getElementById(id);
  if (found === null) throw new Error(`the page has no #${id}`);
  return found as T;
}

/** The file a finding is about: its path without the JSON pointer (`plugin.json#/name` → `plugin.json`). */
function fileOf(finding: Finding): string {
  const at = finding.path.indexOf('#');
  return at < 0 ? finding.path : finding.path.slice(0, at);
}

function countText(findings: readonly Finding[]): string {
  const count = (severity: string) => findings.filter((finding) => finding.severity === severity).length;
  const parts = [
    [count('error'), 'error'],
    [count('warning'), 'warning'],
    [count('info'), 'note'],
  ] as const;
  const said = parts.filter(([n]) => n > 0).map(([n, word]) => `${n} ${word}${n === 1 ? '' : 's'}`);
  return said.length === 0 ? 'no findings' : said.join(', ');
}

function list(title: string, items: readonly string[], id: string, empty: string): HTMLElement {
  const section = element('section', undefined, { 'aria-labelledby': `${id}-title` });
  section.append(element('h3', title, { id: `${id}-title` }));
  if (items.length === 0) section.append(element('p', empty));
  else {
    const ul = element('ul', undefined, { id });
    for (const item of items) ul.append(element('li', item));
    section.append(ul);
  }
  return section;
}

/** Renders a verdict: the outcome in words, what a client loads, and the findings by file. */
function render(source: string, verdict: PluginValidation): void {
  const out = byId('verdict');
  out.replaceChildren();
  out.dataset.state = verdict.rejected ? 'rejected' : 'loads';
  out.append(
    element('h2', verdict.rejected ? 'Rejected: a client loads nothing of this plugin' : 'Loads', { id: 'outcome' }),
  );
  out.append(
    element(
      'p',
      `${source}: ${countText(verdict.findings)}${verdict.spec === undefined ? '' : `; targets Agent Plugins ${verdict.spec}`}.`,
      { id: 'summary' },
    ),
  );
  if (!verdict.rejected) {
    const loads = element('section', undefined, { 'aria-labelledby': 'loads-title' });
    loads.append(element('h2', 'What a client would load', { id: 'loads-title' }));
    loads.append(list('Skills', verdict.skills, 'skills', 'No skill.'));
    loads.append(
      list(
        'MCP servers',
        verdict.servers,
        'servers',
        verdict.mcpDisabled ? 'None: MCP is disabled for this plugin.' : 'No server.',
      ),
    );
    if (verdict.skippedSkills.length > 0)
      loads.append(list('Skills a client skips', verdict.skippedSkills, 'skipped-skills', ''));
    if (verdict.skippedServers.length > 0)
      loads.append(list('Servers a client skips', verdict.skippedServers, 'skipped-servers', ''));
    out.append(loads);
  }
  const findings = element('section', undefined, { 'aria-labelledby': 'findings-title' });
  findings.append(element('h2', `Findings (${verdict.findings.length})`, { id: 'findings-title' }));
  const byFile = new Map<string, Finding[]>();
  for (const finding of verdict.findings) {
    const file = fileOf(finding);
    byFile.set(file, [...(byFile.get(file) ?? []), finding]);
  }
  for (const [file, own] of byFile) {
    const group = element('section', undefined, { class: 'file' });
    group.append(element('h3', file === '' ? '(the package as a whole)' : file));
    const ul = element('ul');
    for (const finding of own) {
      const item = element('li', undefined, {
        class: `finding ${finding.severity}`,
        'data-code': finding.code,
        'data-path': finding.path,
        'data-rule': finding.rule,
        'data-severity': finding.severity,
      });
      // The severity is a word, not only a colour.
      item.append(element('strong', `${finding.severity.toUpperCase()} `, { class: 'severity' }));
      item.append(element('code', finding.code));
      item.append(document.createTextNode(` (${finding.rule}) `));
      if (finding.path !== file)
        item.append(element('code', finding.path.slice(file.length), { class: 'pointer' }), ' ');
      item.append(element('span', finding.message, { class: 'message' }));
      const details = element('details');
      details.append(element('summary', `Explain ${finding.code}`));
      details.append(element('p', explain(finding.code) ?? 'No rule text for this code.', { class: 'explain' }));
      item.append(details);
      ul.append(item);
    }
    group.append(ul);
    findings.append(group);
  }
  out.append(findings);
  byId('status').textContent =
    `Validated ${source}: ${verdict.rejected ? 'rejected' : 'loads'}, ${countText(verdict.findings)}.`;
}

async function readArchive(file: File): Promise<PackageUpload | undefined> {
  const bytes = new Uint8Array(await file.arrayBuffer());
  if (/\.zip$/i.test(file.name)) return readZip(bytes);
  if (/\.(tar\.gz|tgz)$/i.test(file.name)) return readTarGz(bytes);
  return undefined;
}

async function validate(source: string, read: () => Promise<PackageUpload | undefined>): Promise<void> {
  byId('status').textContent = `Reading ${source}…`;
  try {
    const upload = await read();
    if (upload === undefined) {
      byId('status').textContent = `${source} is not a folder, a .zip or a .tar.gz.`;
      return;
    }
    render(source, await validatePlugin(upload));
  } catch (error) {
    byId('status').textContent =
      `${source} could not be read: ${error instanceof Error ? error.message : String(error)}`;
  }
}

/** Every file below a dropped folder, with its path from the folder (what a folder pick gives). */
async function filesOf(entry: FileSystemEntry, prefix = ''): Promise<UploadedFile[]> {
  const path = `${prefix}${entry.name}`;
  if (entry.isFile)
    return [
      {
        path,
        blob: await new Promise<File>((resolve, reject) => (entry as FileSystemFileEntry).file(resolve, reject)),
      },
    ];
  const reader = (entry as FileSystemDirectoryEntry).createReader();
  const children: FileSystemEntry[] = [];
  // readEntries answers in batches until it answers with none.
  for (;;) {
    const batch = await new Promise<FileSystemEntry[]>((resolve, reject) => reader.readEntries(resolve, reject));
    if (batch.length === 0) break;
    children.push(...batch);
  }
  const nested = await Promise.all(children.map((child) => filesOf(child, `${path}/`)));
  return nested.flat();
}

function wire(): void {
  const folder = byId<HTMLInputElement>('folder');
  const archive = byId<HTMLInputElement>('archive');
  const zone = byId('drop');
  folder.addEventListener('change', () => {
    const files = Array.from(folder.files ?? []);
    const name = files[0]?.webkitRelativePath.split('/')[0] ?? 'the folder';
    void validate(`folder ${name}`, () => readUploadedFiles(files));
  });
  archive.addEventListener('change', () => {
    const file = archive.files?.[0];
    if (file !== undefined) void validate(file.name, () => readArchive(file));
  });
  zone.addEventListener('dragover', (event) => {
    event.preventDefault();
    zone.classList.add('over');
  });
  zone.addEventListener('dragleave', () => zone.classList.remove('over'));
  zone.addEventListener('drop', (event) => {
    event.preventDefault();
    zone.classList.remove('over');
    const item = event.dataTransfer?.items[0];
    const entry = item?.webkitGetAsEntry() ?? null;
    const file = item?.getAsFile() ?? null;
    if (entry?.isDirectory) void validate(`folder ${entry.name}`, async () => readUploadedFiles(await filesOf(entry)));
    else if (file !== null) void validate(file.name, () => readArchive(file));
  });
  // The drop zone is a button: pressed (Enter, Space or a click), it opens the archive picker.
  zone.addEventListener('click', () => archive.click());
  byId('status').textContent = 'Ready: choose or drop a plugin.';
}

wire();
