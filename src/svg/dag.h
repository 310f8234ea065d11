// A stand-alone SVG drawing of a directed acyclic graph (the HTML report's TensorRT engine graph):
// nodes in layers top to bottom (a node sits one layer below its deepest predecessor), each layer
// ordered by its predecessors' positions, edges as curves with arrowheads. Offline, no script.
#pragma once

#include <string>
#include <vector>

namespace sightline::svg {

struct DagNode {
  std::string label;    // first line; shortened to fit the box
  std::string detail;   // second line, smaller
  std::string tooltip;  // <title>
  std::string fill = "#ffffff";
  bool terminal = false;  // drawn as a small pill (a graph input or output)
};

struct DagEdge {
  int from = 0, to = 0;  // indexes into the nodes; edges with from >= to are not drawn
};

// Nodes must be in a topological order (every edge from an earlier node to a later one).
std::string DagSvg(const std::vector<DagNode>& nodes, const std::vector<DagEdge>& edges);

}  // namespace sightline::svg
