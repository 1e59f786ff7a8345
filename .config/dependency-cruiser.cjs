/**
 * The layers, checked by `npm run layers` (and so by .ci/run): imports run one way, and none forms a circle.
 *
 *   src/ (the queue)            imports nothing of ours
 *   model/ (the spec)           imports nothing of ours
 *   properties/core/            imports model/ only: the vocabulary every check shares
 *   properties/overlap/         imports core/: the check of overlapping calls
 *   properties/sequential/      imports core/ and overlap/: the check of command sequences, and checkConformance
 *   properties/lifecycle/       imports core/: the check of waiting takes, drains and aborts
 *   properties/history/         imports nothing of ours: the check of distributed histories
 *   properties/report/          imports core/, the checks and protocol/'s codec (to write protocol lines)
 *   properties/protocol/        imports core/
 *   properties/vectors/         imports model/, core/ and protocol/ (the conformance vectors' generator)
 *   properties/cli/             imports all of the above, and src/ for `npm start`
 *   properties/test/            the suites: anything; nothing imports them
 */
const layer = (from, forbidden, comment) => ({
  name: `${from.replace(/[^a-z]+/g, "-")}-imports-downwards`,
  comment,
  severity: "error",
  from: { path: `^${from}` },
  to: { path: forbidden },
});

module.exports = {
  forbidden: [
    {
      name: "no-circular",
      severity: "error",
      comment: "a circle has no bottom layer",
      from: {},
      to: { circular: true },
    },
    layer("src/", "^(model|properties|bench)/", "the queue depends on nothing of ours"),
    layer("model/", "^(src|properties|bench)/", "the model never imports the implementation"),
    layer(
      "properties/core/",
      "^(src|bench)/|^properties/(sequential|overlap|lifecycle|history|report|protocol|vectors|cli|test)/",
      "the core is the bottom of the oracle: every check shares it",
    ),
    layer(
      "properties/overlap/",
      "^(src|bench)/|^properties/(sequential|lifecycle|history|report|protocol|vectors|cli|test)/",
      "the check of overlapping calls stands on the core alone",
    ),
    layer(
      "properties/sequential/",
      "^(src|bench)/|^properties/(lifecycle|history|report|protocol|vectors|cli|test)/",
      "the sequential check stands on the core, and checkConformance adds the overlapping check's report to its own",
    ),
    layer(
      "properties/lifecycle/",
      "^(src|bench)/|^properties/(sequential|overlap|history|report|protocol|vectors|cli|test)/",
      "the lifecycle check stands on the core alone",
    ),
    layer(
      "properties/history/",
      "^(src|bench)/|^properties/(core|sequential|overlap|lifecycle|report|protocol|vectors|cli|test)/",
      "the history check judges logged events and needs nothing else of ours",
    ),
    layer(
      "properties/report/",
      "^(src|bench)/|^properties/protocol/(?!codec\\.ts$)|^properties/(vectors|cli|test)/",
      "reports render what the checks found, and a counterexample as protocol lines with the protocol's codec",
    ),
    layer(
      "properties/protocol/",
      "^(src|bench)/|^properties/(sequential|overlap|lifecycle|history|report|vectors|cli|test)/",
      "the protocol is a driver over the core's vocabulary",
    ),
    layer(
      "properties/vectors/",
      "^(src|bench)/|^properties/(sequential|overlap|lifecycle|history|report|cli|test)/",
      "the vectors are made from the model and replayed through the protocol's mapping",
    ),
    layer("properties/cli/", "^bench/|^properties/test/", "the command line is the top layer"),
    layer(
      "properties/index",
      "^(src|bench)/|^properties/(cli|test)/",
      "the library entry exposes the library, not the shell",
    ),
    layer("bench/", "^properties/test/", "benchmarks use what is shipped"),
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "^(dist|node_modules)/" },
    tsConfig: { fileName: "tsconfig.json" },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { extensions: [".ts", ".js", ".mjs"] },
  },
};
