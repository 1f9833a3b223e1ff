/**
 * The Kubernetes base (deploy/kubernetes/), as `kubectl apply -k` would take it: every resource
 * that kustomization.yaml lists checked against the Kubernetes API's schemas as the
 * kubernetes-models package carries them (its validators for required fields, types, enums and
 * formats; its TypeScript types, through the compiler, for misspelt fields, which the API server
 * refuses under strict field validation), then the rules between fields that no schema knows:
 * probes on paths the gateway serves, ports that match, a grace period longer than the drain and
 * the grace together, selectors that select the pods, settings that are settings, no secret
 * value. Each check fails on a planted mistake.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments, parse as parseYaml } from 'yaml';
import { loadConfig } from '../../src/config.ts';
import { SETTINGS, type Setting, type SettingName } from '../../src/settings.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BASE = join(ROOT, 'deploy/kubernetes');

/** One resource of the base. */
interface Resource {
  file: string;
  // biome-ignore lint/suspicious/noExplicitAny: parsed YAML, walked by the checks below
  object: any;
}

/** The resources kustomization.yaml lists, parsed, and the kustomization itself. */
function loadBase(): { kustomization: { resources: string[] }; resources: Resource[] } {
  const kustomization = parseYaml(readFileSync(join(BASE, 'kustomization.yaml'), 'utf8'));
  const resources: Resource[] = [];
  for (const file of kustomization.resources as string[]) {
    for (const document of parseAllDocuments(readFileSync(join(BASE, file), 'utf8'))) {
      if (document.errors.length > 0) throw new Error(`${file}: ${document.errors[0]?.message}`);
      resources.push({ file, object: document.toJS() });
    }
  }
  return { kustomization, resources };
}

/** `apps/v1` + `Deployment` → the model's module (`kubernetes-models/apps/v1`) and interface. */
function modelOf(apiVersion: string, kind: string): { module: string; type: string } {
  return { module: `kubernetes-models/${apiVersion}`, type: `I${kind}` };
}

/** The package's runtime validators: required fields, types, enums and formats. */
async function schemaProblems(resources: Resource[]): Promise<string[]> {
  const problems: string[] = [];
  for (const { file, object } of resources) {
    const group = (await import(modelOf(object.apiVersion, object.kind).module)) as Record<
      string,
      new (
        data: unknown,
      ) => { validate(): void }
    >;
    const Model = group[object.kind];
    if (!Model) {
      problems.push(`${file}: no schema for ${object.apiVersion} ${object.kind}`);
      continue;
    }
    try {
      new Model(object).validate();
    } catch (error) {
      problems.push(`${file}: ${(error as Error).message.split('\n').slice(0, 3).join(' ')}`);
    }
  }
  return problems;
}

/**
 * The package's TypeScript types, through the compiler: each resource as an object literal of its
 * kind's interface, so that a field the API does not have (a misspelling) is an error at any
 * depth, as strict field validation makes it on the API server.
 */
function typeProblems(resources: Resource[]): string[] {
  const file = join(ROOT, 'test/unit/kubernetes-manifests.virtual.ts');
  const lines: string[] = [];
  resources.forEach(({ object }, index) => {
    const { module, type } = modelOf(object.apiVersion, object.kind);
    lines.push(`import type { ${type} as T${index} } from '${module}';`);
    lines.push(`export const resource${index}: T${index} = ${JSON.stringify(object)};`);
  });
  const source = lines.join('\n');
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    skipLibCheck: true,
    types: [],
  };
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (name, version, ...rest) =>
    name === file
      ? ts.createSourceFile(name, source, version)
      : getSourceFile(name, version, ...rest);
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (name) => name === file || fileExists(name);
  const program = ts.createProgram([file], options, host);
  return ts.getPreEmitDiagnostics(program).map((diagnostic) => {
    const line = diagnostic.file?.getLineAndCharacterOfPosition(diagnostic.start ?? 0).line ?? 0;
    const resource = resources[Math.floor((line - 1) / 2)];
    return `${resource?.file ?? '?'}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, ' ')}`;
  });
}

function only<T>(items: T[], what: string): T {
  if (items.length !== 1) throw new Error(`expected one ${what}, found ${items.length}`);
  return items[0] as T;
}

function ofKind(resources: Resource[], kind: string) {
  return only(
    resources.filter((r) => r.object.kind === kind).map((r) => r.object),
    kind,
  );
}

const secretSettings = new Set(
  Object.entries(SETTINGS as Record<SettingName, Setting<unknown>>)
    .filter(([, setting]) => setting.secret)
    .map(([name]) => name),
);

/** The rules between fields; `serves(path)` tells whether the gateway serves a path. */
function crossFieldProblems(
  kustomization: { resources: string[] },
  resources: Resource[],
  serves: (path: string) => boolean,
): string[] {
  const problems: string[] = [];
  const check = (ok: boolean, problem: string) => {
    if (!ok) problems.push(problem);
  };
  const listed = new Set(kustomization.resources);
  for (const file of readdirSync(BASE)) {
    if (file.endsWith('.yaml') && file !== 'kustomization.yaml')
      check(listed.has(file), `${file} is not in kustomization.yaml`);
  }
  check(
    resources.every((r) => r.object.kind !== 'Secret'),
    'the base holds a Secret: secrets are referenced, never written here',
  );
  const deployment = ofKind(resources, 'Deployment');
  const configMap = ofKind(resources, 'ConfigMap');
  const settings: Record<string, string> = configMap.data ?? {};
  const pod = deployment.spec.template;
  const labels: Record<string, string> = pod.metadata.labels ?? {};
  const selects = (selector: Record<string, string> | undefined, what: string) =>
    check(
      selector !== undefined &&
        Object.keys(selector).length > 0 &&
        Object.entries(selector).every(([k, v]) => labels[k] === v),
      `${what} does not select the Deployment's pods`,
    );
  selects(deployment.spec.selector.matchLabels, 'the Deployment selector');
  const container: Resource['object'] = only(pod.spec.containers as unknown[], 'container');
  const ports = new Map<string, number>(
    (container.ports ?? []).map((p: { name: string; containerPort: number }) => [
      p.name,
      p.containerPort,
    ]),
  );
  const portOf = (port: string | number) => (typeof port === 'number' ? port : ports.get(port));
  check(
    ports.get('http') === Number(settings.PORT),
    "container port `http` is not the ConfigMap's PORT",
  );
  check(
    ports.get('metrics') === Number(settings.METRICS_PORT),
    "container port `metrics` is not the ConfigMap's METRICS_PORT",
  );
  // Settings: every key a declared setting, none a secret; the whole set loads in production.
  for (const name of Object.keys(settings)) {
    check(name in SETTINGS, `ConfigMap key ${name} is not a setting`);
    check(!secretSettings.has(name), `ConfigMap holds the secret setting ${name}`);
  }
  for (const env of container.env ?? []) {
    check(!secretSettings.has(env.name) || env.value === undefined, `env ${env.name} has a value`);
  }
  check(
    (container.envFrom ?? []).some((e: { secretRef?: { name?: string } }) => e.secretRef?.name),
    'the container takes no Secret (envFrom secretRef)',
  );
  try {
    loadConfig({
      ...settings,
      PAYMENT_ACCESS_TOKEN: 'a-token-from-the-secret',
      KYC_SECRET_KEY: 'a-key-from-the-secret',
      AUTH_JWT_SECRET: 'a-secret-from-the-secret-of-32-bytes-or-more',
    });
  } catch (error) {
    problems.push(`the ConfigMap's settings do not load: ${(error as Error).message}`);
  }
  // Probes: on paths the gateway serves, on its API port.
  const probes = {
    startupProbe: '/healthz',
    livenessProbe: '/healthz',
    readinessProbe: '/readyz',
  } as const;
  for (const [name, expected] of Object.entries(probes)) {
    const get = container[name]?.httpGet;
    check(get !== undefined, `no ${name}`);
    if (!get) continue;
    check(serves(get.path), `${name} probes ${get.path}, which the gateway does not serve`);
    check(get.path === expected, `${name} probes ${get.path}, not ${expected}`);
    check(portOf(get.port) === ports.get('http'), `${name} is not on the API port`);
  }
  // Shutdown: the kubelet's SIGKILL after preStop, the drain and the grace period.
  const preStopMs = (container.lifecycle?.preStop?.sleep?.seconds ?? 0) * 1000;
  const drainMs = Number(settings.SHUTDOWN_DRAIN_MS ?? 5000);
  const graceMs = Number(settings.SHUTDOWN_GRACE_MS ?? 10_000);
  const terminationMs = (pod.spec.terminationGracePeriodSeconds ?? 30) * 1000;
  check(
    terminationMs > preStopMs + drainMs + graceMs,
    `terminationGracePeriodSeconds (${terminationMs} ms) is not more than preStop + SHUTDOWN_DRAIN_MS + SHUTDOWN_GRACE_MS (${preStopMs + drainMs + graceMs} ms)`,
  );
  const readinessMs =
    (container.readinessProbe?.periodSeconds ?? 10) *
    (container.readinessProbe?.failureThreshold ?? 3) *
    1000;
  check(
    drainMs > readinessMs,
    `SHUTDOWN_DRAIN_MS (${drainMs}) is not longer than the readiness probe needs to see a 503 (${readinessMs} ms)`,
  );
  // Hardening.
  const context = container.securityContext ?? {};
  check(pod.spec.securityContext?.runAsNonRoot === true, 'the pod may run as root');
  check(context.readOnlyRootFilesystem === true, 'the root filesystem is writable');
  check(context.allowPrivilegeEscalation === false, 'privilege escalation is allowed');
  check(
    container.resources?.requests?.cpu !== undefined,
    'no CPU request (the autoscaler needs one)',
  );
  check(container.resources?.limits?.memory !== undefined, 'no memory limit');
  // The other resources: selectors, ports and the scaled target.
  const service = ofKind(resources, 'Service');
  selects(service.spec.selector, 'the Service');
  for (const port of service.spec.ports) {
    check(
      portOf(port.targetPort) !== undefined,
      `Service port ${port.name} targets no container port`,
    );
  }
  selects(
    ofKind(resources, 'PodDisruptionBudget').spec.selector.matchLabels,
    'the PodDisruptionBudget',
  );
  const policy = ofKind(resources, 'NetworkPolicy');
  selects(policy.spec.podSelector.matchLabels, 'the NetworkPolicy');
  for (const rule of policy.spec.ingress ?? []) {
    for (const port of rule.ports ?? []) {
      check(portOf(port.port) !== undefined, `NetworkPolicy opens ${port.port}, no container port`);
    }
  }
  const target = ofKind(resources, 'HorizontalPodAutoscaler').spec.scaleTargetRef;
  check(
    target.kind === 'Deployment' && target.name === deployment.metadata.name,
    'the HorizontalPodAutoscaler scales something else',
  );
  return problems;
}

let gateway: TestGateway;
/** Paths the gateway answers other than 404, learnt from a real one. */
const served = new Map<string, boolean>();

beforeAll(async () => {
  gateway = await startGateway({ paymentUrl: 'http://127.0.0.1:9', kycUrl: 'http://127.0.0.1:9' });
  for (const path of ['/healthz', '/readyz', '/ready', '/health', '/livez']) {
    served.set(path, (await fetch(`${gateway.url}${path}`)).status !== 404);
  }
});
afterAll(() => gateway?.close());

const serves = (path: string) => served.get(path) ?? false;

/** Every problem of a (possibly changed) base. */
async function allProblems(change?: (resources: Resource[]) => void): Promise<string[]> {
  const { kustomization, resources } = loadBase();
  change?.(resources);
  return [
    ...(await schemaProblems(resources)),
    ...typeProblems(resources),
    ...crossFieldProblems(kustomization, resources, serves),
  ];
}

const deploymentOf = (resources: Resource[]) =>
  resources.find((r) => r.object.kind === 'Deployment')?.object;

describe('deploy/kubernetes', () => {
  it('passes the API schemas and the rules between fields', async () => {
    expect(await allProblems()).toEqual([]);
  }, 60_000);

  it('fails on a misspelt field', async () => {
    const problems = await allProblems((resources) => {
      const container = deploymentOf(resources).spec.template.spec.containers[0];
      container.readinesProbe = container.readinessProbe;
      delete container.readinessProbe;
    });
    expect(problems.join('\n')).toMatch(/readinesProbe"?' does not exist in type 'IContainer'/);
  }, 60_000);

  it('fails on a value of the wrong type and on a missing required field', async () => {
    const problems = await allProblems((resources) => {
      const spec = deploymentOf(resources).spec;
      spec.replicas = 'two';
      delete spec.template.spec.containers[0].name;
    });
    expect(problems).toContain(
      'deployment.yaml: data/spec/replicas must be integer, data/spec/template/spec/containers/0 must have required property name',
    );
  }, 60_000);

  it('fails on a probe of a path the gateway does not serve', async () => {
    expect(serves('/readyz')).toBe(true);
    expect(serves('/ready')).toBe(false);
    const problems = await allProblems((resources) => {
      deploymentOf(resources).spec.template.spec.containers[0].readinessProbe.httpGet.path =
        '/ready';
    });
    expect(problems).toContain('readinessProbe probes /ready, which the gateway does not serve');
  }, 60_000);

  it('fails when the grace period does not cover preStop, the drain and the grace', async () => {
    const problems = await allProblems((resources) => {
      deploymentOf(resources).spec.template.spec.terminationGracePeriodSeconds = 15;
    });
    expect(problems.join('\n')).toMatch(/terminationGracePeriodSeconds \(15000 ms\) is not more/);
  }, 60_000);

  it('fails on mismatched ports, selectors and a secret in the ConfigMap', async () => {
    const problems = await allProblems((resources) => {
      const config = resources.find((r) => r.object.kind === 'ConfigMap')?.object;
      config.data.PORT = '8080';
      config.data.AUTH_JWT_SECRET = 'a-secret-written-into-the-base-of-32-bytes';
      const service = resources.find((r) => r.object.kind === 'Service');
      if (service) service.object.spec.selector = { app: 'other' };
    });
    expect(problems).toEqual(
      expect.arrayContaining([
        "container port `http` is not the ConfigMap's PORT",
        'ConfigMap holds the secret setting AUTH_JWT_SECRET',
        "the Service does not select the Deployment's pods",
      ]),
    );
  }, 60_000);
});
