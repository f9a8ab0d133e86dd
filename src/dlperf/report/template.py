"""The report page's Jinja2 template. A Python module rather than a template file, so the
workflow's code digest of the report stage (dlperf.pipeline.provenance) covers it: a changed page
re-renders the report."""

PAGE = """\
<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>dlperf report</title>
<style>
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;margin:2rem auto;max-width:1250px;
 color:#222;padding:0 1rem}
h1{font-size:1.6rem}h3{margin-top:1.5rem}
h2{border-bottom:1px solid #ddd;padding-bottom:.2rem;margin-top:2rem}
table{border-collapse:collapse;font-size:.8rem;margin:.5rem 0}
th,td{border:1px solid #ccc;padding:.2rem .45rem;text-align:right;vertical-align:top}
th{background:#f3f3f3}td.l,th.l{text-align:left}tr.best td{background:#e3f6e3;font-weight:600}
figure{margin:1rem 0}figcaption{font-size:.85rem;color:#555;max-width:950px}
img{max-width:100%;height:auto}.muted{color:#777}code{background:#f5f5f5;padding:0 .2rem}
nav ul{font-size:.9rem;list-style:none;padding-left:1rem}
nav li.l3{margin-left:1.4rem;display:inline-block}nav li.l3::before{content:'· '}
ul.facts{padding-left:1.2rem;max-width:1000px}ul.facts li{margin:.25rem 0}
.warnings{background:#fff7e0;border-left:4px solid #e0a800;padding:.4rem .8rem;
 max-width:1000px}
.warnings ul{margin:.2rem 0}.warn{color:#a05a00}
details>summary{cursor:pointer;color:#245;margin:.4rem 0}
</style></head><body>
<h1>dlperf report</h1>
<p>{% if n_runs or n_failed %}
{{ n_runs }} successful run{{ "s" if n_runs != 1 else "" }}{% if n_disturbed %}
 ({{ n_disturbed }} of them disturbed by other programs, see Warnings){% endif %} and
{{ n_failed }} failed run{{ "s" if n_failed != 1 else "" }};
{% else %}
No benchmark run of this study's own (brought-in timings only);
{% endif %}
{{ n_points }} measured configuration{{ "s" if n_points != 1 else "" }}
of {{ n_frameworks }} framework{{ "s" if n_frameworks != 1 else "" }} modelled.</p>
<nav><ul>
{% for s in nav %}
<li class="l{{ s.level }}"><a href="#{{ s.ident }}">{{ s.title }}</a></li>
{% endfor %}
</ul></nav>
{% for s in sections %}
<h{{ s.level }} id="{{ s.ident }}">{{ s.title }}</h{{ s.level }}>
{% if s.folded %}<details><summary>Show {{ s.teaser }}</summary>
{% endif %}
{% for block in s.blocks %}
{% if block is figure %}
<figure id="{{ block.ident }}"><img src="{{ block | data_uri }}" alt="{{ block.title }}">
{% set file = (link_dir ~ '/' if link_dir) ~ block.path %}
<figcaption><b>{{ block.title }}.</b> {{ block.caption }}
(<a href="{{ file }}.svg">SVG</a>, <a href="{{ file }}.png">PNG</a>)</figcaption></figure>
{% else %}
{{ block }}
{% endif %}
{% endfor %}
{% if s.folded %}</details>
{% endif %}
{% endfor %}
</body></html>
"""
