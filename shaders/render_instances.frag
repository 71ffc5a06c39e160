#version 460
layout(location = 0) in vec3 in_normal;
layout(location = 1) flat in uint in_instance;
layout(location = 0) out vec4 out_color;

// A stable, pleasant colour per instance.
vec3 instance_color(uint i) {
  uint h = i * 2654435761u;
  float hue = float(h >> 8) / 16777216.0;
  vec3 k = mod(vec3(5.0, 3.0, 1.0) + hue * 6.0, 6.0);
  return vec3(0.9) - 0.6 * clamp(min(k, 4.0 - k), 0.0, 1.0);
}

void main() {
  float len = length(in_normal);
  vec3 n = len > 0.0 ? in_normal / len : vec3(0.0, 1.0, 0.0);
  float light = 0.35 + 0.65 * max(dot(n, normalize(vec3(0.35, 0.85, 0.4))), 0.0);
  out_color = vec4(instance_color(in_instance) * light, 1.0);
}
