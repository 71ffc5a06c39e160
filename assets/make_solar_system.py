#!/usr/bin/env python3
"""Writes assets/solar_system.json, the scene `tprop run` loads by default.

A small solar system that exercises every part of the transform rules: orbit nodes whose
RotationEulerYXZ tilts the orbital plane, planets with quaternion axial tilts, bodies with
Scale and NonUniformScale, moons two levels further down, Saturn's ring as many small
entities, an asteroid belt, a space station built from pivots and CompositeRotation /
CompositeScale, a Static background star field, a camera whose LocalToWorld is user-written
(writeGroupOverride) and a probe placed by a user-written LocalToParent.

Deterministic: Python's random with a fixed seed (the Mersenne Twister is specified).
Run: python3 assets/make_solar_system.py > assets/solar_system.json
"""
import json
import math
import random

rng = random.Random(2026)
entities = []


def r6(v):
    """Six decimals keep the file readable; quaternions stay unit length to about 1e-6."""
    return round(v, 6) + 0.0  # + 0.0 turns -0.0 into 0.0


def vec(*v):
    return [r6(x) for x in v]


def quat_axis_angle(axis, angle):
    ax, ay, az = axis
    n = math.sqrt(ax * ax + ay * ay + az * az)
    s = math.sin(angle / 2) / n
    return vec(ax * s, ay * s, az * s, math.cos(angle / 2))


def add(name, parent=None, **components):
    e = {"id": len(entities) + 1, "name": name}
    if parent is not None:
        e["parent"] = parent
    e.update(components)
    entities.append(e)
    return e["id"]


deg = math.radians

system = add("solar system", Translation=vec(0, 0, 0))
add("sun", system, RotationEulerXYZ=vec(0, deg(40), 0), Scale=6.0)

# name, orbit radius, inclination (deg), body radius, axial tilt (deg), moons
planets = [
    ("mercury", 10, 7.0, 0.4, 0.0, []),
    ("venus", 15, 3.4, 0.9, 177.4, []),
    ("earth", 21, 0.0, 1.0, 23.4, [("moon", 2.6, 0.27)]),
    ("mars", 28, 1.9, 0.55, 25.2, [("phobos", 1.2, 0.08), ("deimos", 1.8, 0.06)]),
    ("jupiter", 45, 1.3, 3.2, 3.1,
     [("io", 4.4, 0.29), ("europa", 5.6, 0.25), ("ganymede", 7.2, 0.41), ("callisto", 9.4, 0.38)]),
    ("saturn", 62, 2.5, 2.7, 26.7,
     [("titan", 8.8, 0.4), ("rhea", 6.3, 0.12), ("iapetus", 11.0, 0.11)]),
    ("uranus", 78, 0.8, 1.9, 97.8, [("titania", 3.6, 0.12), ("oberon", 4.4, 0.11)]),
    ("neptune", 92, 1.8, 1.8, 28.3, [("triton", 3.4, 0.21)]),
]

planet_ids = {}
for i, (name, distance, inclination, radius, tilt, moons) in enumerate(planets):
    # YXZ turns about y first (the orbital phase, in the plane), then about x (the tilt of
    # the plane): a tilted orbit.
    orbit = add(name + " orbit", system,
                RotationEulerYXZ=vec(deg(inclination), deg(i * 47.0 % 360), 0))
    planet = add(name, orbit, Translation=vec(distance, 0, 0),
                 Rotation=quat_axis_angle((0, 0, 1), deg(tilt)))
    planet_ids[name] = planet
    # The body carries the size so that the moons, children of the planet, are not scaled.
    if name == "saturn" or name == "jupiter":  # visibly oblate
        add(name + " body", planet, NonUniformScale=vec(radius, radius * 0.92, radius))
    else:
        add(name + " body", planet, Scale=radius)
    for k, (moon, moon_distance, moon_radius) in enumerate(moons):
        moon_orbit = add(moon + " orbit", planet,
                         RotationEulerXYZ=vec(deg(5 * k), deg(k * 83.0 + 20), 0))
        add(moon, moon_orbit, Translation=vec(moon_distance, 0, 0), Scale=moon_radius)

# Saturn's ring: many small rocks in the planet's equatorial plane.
ring = add("saturn ring", planet_ids["saturn"], RotationEulerXYZ=vec(0, 0, 0))
for k in range(120):
    a = 2 * math.pi * k / 120 + rng.uniform(-0.02, 0.02)
    r = rng.uniform(3.6, 5.4)
    add("ring rock %d" % k, ring,
        Translation=vec(r * math.cos(a), rng.uniform(-0.03, 0.03), r * math.sin(a)),
        Scale=r6(rng.uniform(0.03, 0.09)))

# The asteroid belt between Mars and Jupiter, turning slowly as a whole; lumpy rocks.
belt = add("asteroid belt", system, RotationEulerXYZ=vec(0, deg(12), 0))
for k in range(80):
    a = rng.uniform(0, 2 * math.pi)
    r = rng.uniform(33, 39)
    components = {"Translation": vec(r * math.cos(a), rng.uniform(-1.2, 1.2), r * math.sin(a)),
                  "RotationEulerZYX": vec(rng.uniform(0, 6.28), rng.uniform(0, 6.28),
                                          rng.uniform(0, 6.28))}
    if k % 3 == 0:
        components["NonUniformScale"] = vec(rng.uniform(0.1, 0.3), rng.uniform(0.1, 0.3),
                                            rng.uniform(0.1, 0.3))
    else:
        components["Scale"] = r6(rng.uniform(0.08, 0.25))
    add("asteroid %d" % k, belt, **components)

# A space station in Earth orbit, built the Unity way: the hub spins about a pivot off its
# origin (CompositeRotation from RotationPivot, RotationPivotTranslation, Rotation,
# PostRotation), the solar arrays scale about their root (CompositeScale from ScalePivot), and
# a docked capsule undoes its parent's scale (ParentScaleInverse).
station_orbit = add("station orbit", planet_ids["earth"],
                    RotationEulerXYZ=vec(deg(51.6), deg(10), 0))
station = add("space station", station_orbit, Translation=vec(1.6, 0, 0), Scale=0.05)
hub = add("station hub", station,
          Translation=vec(0, 0, 0),
          Rotation=quat_axis_angle((0, 1, 0), deg(30)),
          PostRotation=quat_axis_angle((1, 0, 0), deg(90)),
          RotationPivot=vec(0, 0.5, 0),
          RotationPivotTranslation=vec(0, 0.2, 0),
          CompositeRotation=None)
for side, x in (("port", -1.0), ("starboard", 1.0)):
    add("%s solar array" % side, hub,
        Translation=vec(x * 1.5, 0, 0),
        NonUniformScale=vec(3.0, 0.05, 1.0),
        ScalePivot=vec(-x * 0.5, 0, 0),
        ScalePivotTranslation=vec(0, 0, 0),
        CompositeScale=None)
lab = add("station lab", hub, Translation=vec(0, 0, 1.2), Scale=1.5)
add("docked capsule", lab, Translation=vec(0, 0, 0.8),
    Rotation=quat_axis_angle((1, 0, 0), deg(180)),
    ParentScaleInverse=None)
add("station beacon", hub, Translation=vec(0, 1.0, 0),
    RotationEulerXYZ=vec(0, 0, deg(45)), CompositeRotation=None)

# A probe placed by a user-written LocalToParent (no transform source of its own): 3 units
# above Mars and turned a quarter about z, column-major.
add("mars probe", planet_ids["mars"],
    LocalToParent=[0, 1, 0, 0, -1, 0, 0, 0, 0, 0, 1, 0, 0, 3, 0, 1])

# The observer's camera: its LocalToWorld is written by the user (a camera rig outside the
# transform system), so the built-in systems leave it alone; its HUD follows it.
camera = add("camera", None, writeGroupOverride=True,
             LocalToWorld=[1, 0, 0, 0, 0, 0.866025, -0.5, 0, 0, 0.5, 0.866025, 0, 0, 60, 140, 1])
add("camera hud", camera, Translation=vec(0, 0, -1), Scale=0.1)

# The background: Static stars on a large sphere, computed once and then frozen.
stars = add("star field", None, static=True, Translation=vec(0, 0, 0))
for k in range(150):
    z = rng.uniform(-1, 1)
    a = rng.uniform(0, 2 * math.pi)
    s = math.sqrt(1 - z * z)
    add("star %d" % k, stars, static=True,
        Translation=vec(900 * s * math.cos(a), 900 * z, 900 * s * math.sin(a)),
        Scale=r6(rng.uniform(0.5, 3.0)))

print('{"description": "The solar system tprop run loads by default; written by '
      'assets/make_solar_system.py.",')
print(' "entities": [')
print(",\n".join("  " + json.dumps(e) for e in entities))
print(" ]}")
