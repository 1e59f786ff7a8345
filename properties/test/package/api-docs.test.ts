/**
 * The API docs are complete: typedoc converts the five entry points as `npm run docs` does, and every public
 * export says it is public, every function and class shows an example, every parameter is described, and each
 * module is named by its import path. (`npm run docs` itself fails on any other warning.)
 */
import { Application, type DeclarationReflection, ReflectionKind } from "typedoc";
import ts from "typescript";
import { beforeAll, expect, test } from "vitest";

const root = new URL("../../../", import.meta.url).pathname;
let modules: DeclarationReflection[] = [];

beforeAll(async () => {
  const app = await Application.bootstrapWithPlugins({ options: `${root}.config/typedoc.json`, logLevel: "Error" });
  const project = await app.convert();
  if (project === undefined) throw new Error("typedoc could not convert the entry points");
  modules = project.children ?? [];
}, 60_000);

/** The exports of every module, with the module's name. */
const exports = () => modules.flatMap((module) => (module.children ?? []).map((child) => ({ module, child })));

test("each module is named by its import path", () => {
  expect(modules.map((module) => module.name).sort()).toEqual([
    "workqueue-spec",
    "workqueue-spec/model",
    "workqueue-spec/postgres",
    "workqueue-spec/prometheus",
    "workqueue-spec/properties",
  ]);
});

test("every export of an entry point is tagged @public in its doc comment", () => {
  // Read from the sources: typedoc consumes the tag. The internal parts are not exported by an entry point at all.
  const entries = [
    "src/index.ts",
    "src/prometheus.ts",
    "src/postgres/index.ts",
    "model/index.ts",
    "properties/index.ts",
  ].map((file) => `${root}${file}`);
  const program = ts.createProgram(entries, {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
  });
  const checker = program.getTypeChecker();
  const untagged: string[] = [];
  for (const entry of entries) {
    const module = checker.getSymbolAtLocation(program.getSourceFile(entry) as ts.SourceFile) as ts.Symbol;
    for (const exported of checker.getExportsOfModule(module)) {
      const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
      const tagged = (symbol.declarations ?? []).some((declaration) =>
        ts.getJSDocTags(declaration).some((tag) => tag.tagName.text === "public"),
      );
      if (!tagged) untagged.push(`${entry.slice(root.length)}: ${exported.name}`);
    }
  }
  expect(untagged).toEqual([]);
});

test("workqueue-spec/properties exports the checks, the test helpers, connect, serve, the formatters and their types", () => {
  const properties = modules.find((module) => module.name === "workqueue-spec/properties");
  expect((properties?.children ?? []).map((child) => child.name).sort()).toEqual(
    [
      ...["checkConformance", "checkDriver", "checkOverlapping", "checkLifecycle", "checkHistory"],
      ...["conformanceTests", "lifecycleTests", "connect", "ProtocolDriver", "serve"],
      ...["formatReport", "overlapTimeline", "historyTimeline"],
      "stringItems",
      ...["ConformanceOptions", "ConformanceReport", "Subject", "SubjectOptions", "Driver"],
      ...["OverlappingOptions", "OverlappingReport", "LifecycleOptions", "LifecycleReport", "LifecycleSubject"],
      "HistoryEvent",
    ].sort(),
  );
});

test("every export of workqueue-spec/properties shows an example", () => {
  const properties = modules.find((module) => module.name === "workqueue-spec/properties");
  const missing = (properties?.children ?? []).filter((child) => {
    const comments = [child.comment, ...(child.signatures ?? []).map((s) => s.comment)];
    return !comments.some((comment) => comment?.getTag("@example") !== undefined);
  });
  expect(missing.map((child) => child.name)).toEqual([]);
});

test("every function and class has an example", () => {
  const kinds = ReflectionKind.Function | ReflectionKind.Class;
  const missing = exports().filter(({ child }) => {
    if (!child.kindOf(kinds)) return false;
    const comments = [child.comment, ...(child.signatures ?? []).map((s) => s.comment)];
    return !comments.some((comment) => comment?.getTag("@example") !== undefined);
  });
  expect(missing.map(({ module, child }) => `${module.name}: ${child.name}`)).toEqual([]);
});

test("every parameter of a function, constructor or method is described", () => {
  const undescribed: string[] = [];
  const visit = (where: string, reflection: DeclarationReflection) => {
    for (const signature of reflection.signatures ?? []) {
      for (const parameter of signature.parameters ?? []) {
        if ((parameter.comment?.summary.length ?? 0) === 0) undescribed.push(`${where}(${parameter.name})`);
      }
    }
    for (const child of reflection.children ?? []) {
      if (child.inheritedFrom !== undefined) continue; // documented where it is declared (`Error`'s, say)
      if (child.kindOf(ReflectionKind.Constructor | ReflectionKind.Method)) visit(`${where}.${child.name}`, child);
    }
  };
  for (const { module, child } of exports()) visit(`${module.name}: ${child.name}`, child);
  expect(undescribed).toEqual([]);
});
