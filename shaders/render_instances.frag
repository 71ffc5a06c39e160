#version 460
layout(location = 0) in vec3 in_normal;
layout(location = 1) flat in uint in_instance;
layout(location = 0) out vec4 out_color;

// A stable colour per instance from a small palette that reads well on the dark background.
vec3 instance_color(uint i) {
  const vec3 palette[8] = vec3[](vec3(1.0, 0.78, 0.3), vec3(0.98, 0.5, 0.38),
                                 vec3(0.3, 0.78, 0.8), vec3(0.45, 0.62, 1.0),
                                 vec3(0.7, 0.5, 0.98), vec3(0.5, 0.88, 0.6),
                                 vec3(0.98, 0.55, 0.75), vec3(0.9, 0.9, 0.85));
  return palette[((i * 2654435761u) >> 16) & 7u];
}

void main() {
  float len = length(in_normal);
  vec3 n = len > 0.0 ? in_normal / len : vec3(0.0, 1.0, 0.0);
  float light = 0.35 + 0.65 * max(dot(n, normalize(vec3(0.35, 0.85, 0.4))), 0.0);
  out_color = vec4(instance_color(in_instance) * light, 1.0);
}
