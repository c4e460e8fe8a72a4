#include "pmlab/profile/flamegraph.hpp"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <vector>

#include "pmlab/common/text.hpp"
#include "pmlab/profile/stacks.hpp"

namespace pmlab::profile {
namespace {

struct Node {
  std::string name;
  uint64_t value = 0;
  std::map<std::string, std::unique_ptr<Node>> children;  // alphabetical, as flame graphs order callees
};

std::string escape_xml(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

const char* fill_for(Activity a) {
  switch (a) {
    case Activity::persistence: return "#e5533d";
    case Activity::logging: return "#4a90d9";
    case Activity::allocation: return "#59a14f";
    case Activity::search: return "#9c6ade";
    case Activity::other: return "#e8b04b";
  }
  return "#e8b04b";
}

int depth_of(const Node& n) {
  int d = 0;
  for (const auto& [name, child] : n.children) d = std::max(d, 1 + depth_of(*child));
  return d;
}

struct Writer {
  const FlameGraphOptions& o;
  double total;
  int top;     // y of the deepest row
  int levels;  // rows
  std::string out;

  void frame(const Node& n, int depth, double x, Activity inherited) {
    const double w = static_cast<double>(n.value) / total * o.width;
    if (w < o.min_width_px) return;
    Activity a = depth == 0 ? Activity::other : classify_name(n.name);
    if (a == Activity::other) a = inherited;  // a callee of a log append is still logging time
    const int y = top + (levels - 1 - depth) * o.frame_height;
    const std::string name = escape_xml(n.name);
    const size_t fit = static_cast<size_t>(std::max(0.0, (w - 6) / 7));
    std::string label = n.name.size() <= fit ? n.name : (fit > 2 ? n.name.substr(0, fit - 2) + ".." : "");
    out += "<g class=\"f\" data-x=\"" + fixed(x, 2) + "\" data-w=\"" + fixed(w, 2) + "\" data-d=\"" +
           std::to_string(depth) + "\" data-n=\"" + name + "\" onclick=\"pmlabZoom(this)\"><title>" + name + " (" +
           std::to_string(n.value) + " ns sampled, " + fixed(100.0 * static_cast<double>(n.value) / total, 2) + "%; " +
           to_string(a) + ")</title><rect x=\"" + fixed(x, 2) + "\" y=\"" + std::to_string(y) + "\" width=\"" +
           fixed(w, 2) + "\" height=\"" + std::to_string(o.frame_height - 1) + "\" fill=\"" + fill_for(a) +
           "\" rx=\"1\"/><text x=\"" + fixed(x + 3, 2) + "\" y=\"" + std::to_string(y + o.frame_height - 4) + "\">" +
           escape_xml(label) + "</text></g>\n";
    double cx = x;
    for (const auto& [cname, child] : n.children) {
      frame(*child, depth + 1, cx, a);
      cx += static_cast<double>(child->value) / total * o.width;
    }
  }
};

// Click zoom for the standalone file: a frame fills the width, its ancestors span it, the rest hides.
constexpr const char* kZoomScript = R"(<script><![CDATA[
function pmlabZoom(g){var s=g.ownerSVGElement,W=+s.getAttribute('data-width'),x0=+g.dataset.x,w0=+g.dataset.w,d0=+g.dataset.d;
s.querySelectorAll('g.f').forEach(function(f){var x=+f.dataset.x,w=+f.dataset.w,d=+f.dataset.d,r=f.querySelector('rect'),t=f.querySelector('text');
var nx,nw;if(d<d0){nx=0;nw=W;}else if(x+w<=x0+0.001||x>=x0+w0-0.001){f.style.display='none';return;}else{nx=(x-x0)/w0*W;nw=w/w0*W;}
f.style.display='';r.setAttribute('x',nx);r.setAttribute('width',nw);t.setAttribute('x',nx+3);var n=f.dataset.n,k=Math.floor((nw-6)/7);
t.textContent=n.length<=k?n:(k>2?n.substring(0,k-2)+'..':'');});}
]]></script>
)";

}  // namespace

std::string flame_graph_svg(const std::map<std::string, uint64_t>& folded, const FlameGraphOptions& options) {
  Node root;
  root.name = "all";
  for (const auto& [stack, value] : folded) {
    root.value += value;
    Node* at = &root;
    size_t start = 0;
    while (start <= stack.size()) {
      size_t semi = stack.find(';', start);
      std::string name = stack.substr(start, semi == std::string::npos ? std::string::npos : semi - start);
      auto& child = at->children[name];
      if (!child) {
        child = std::make_unique<Node>();
        child->name = name;
      }
      child->value += value;
      at = child.get();
      if (semi == std::string::npos) break;
      start = semi + 1;
    }
  }
  const int levels = depth_of(root) + 1;
  const int top = 44;
  const int height = top + levels * options.frame_height + 8;
  Writer w{options, root.value ? static_cast<double>(root.value) : 1.0, top, levels, {}};
  w.out += "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"pmlab-flame\" width=\"" + std::to_string(options.width) +
           "\" height=\"" + std::to_string(height) + "\" viewBox=\"0 0 " + std::to_string(options.width) + " " +
           std::to_string(height) + "\" data-width=\"" + std::to_string(options.width) +
           "\" font-family=\"monospace\" font-size=\"11\">\n"
           "<style>.pmlab-flame g.f{cursor:pointer}.pmlab-flame g.f:hover rect{stroke:#000;stroke-width:.6}</style>\n"
           "<rect width=\"100%\" height=\"100%\" fill=\"#fdfdf8\"/>\n";
  w.out += "<text x=\"4\" y=\"16\" font-size=\"13\" font-weight=\"bold\">" + escape_xml(options.title) + "</text>\n";
  w.out += "<text x=\"4\" y=\"32\" fill=\"#555\">" + escape_xml(options.subtitle) +
           " — colours: persistence red, logging blue, allocation green, search purple, other yellow</text>\n";
  if (root.value == 0) w.out += "<text x=\"4\" y=\"" + std::to_string(top + 12) + "\">no samples</text>\n";
  else w.frame(root, 0, 0.0, Activity::other);
  w.out += kZoomScript;
  w.out += "</svg>\n";
  return w.out;
}

}  // namespace pmlab::profile
