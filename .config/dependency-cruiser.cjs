/**
 * The layers, checked by `npm run layers` (and so by .ci/run): imports run one way, and none forms a circle.
 *
 *   src/ (the queue)            imports nothing of ours
 *   model/ (the spec)           imports nothing of ours
 *   properties/engine/          imports model/ only
 *   properties/report/          imports engine/
 *   properties/protocol/        imports engine/
 *   properties/vectors/         imports model/, engine/ and protocol/ (the conformance vectors' generator)
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
      "properties/engine/",
      "^(src|bench)/|^properties/(report|protocol|cli|test)/",
      "the engine is the bottom of the oracle",
    ),
    layer(
      "properties/report/",
      "^(src|bench)/|^properties/(protocol|cli|test)/",
      "reports render what the engine found",
    ),
    layer(
      "properties/protocol/",
      "^(src|bench)/|^properties/(report|cli|test)/",
      "the protocol is a driver of the engine",
    ),
    layer(
      "properties/vectors/",
      "^(src|bench)/|^properties/(report|cli|test)/",
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
