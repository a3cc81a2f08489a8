// Placeholder replaced by the native-layer work (issue 4): builds the addon when a C++ toolchain is present.
console.log("cclab: native addon not built yet (pure TypeScript fallbacks in use)");
