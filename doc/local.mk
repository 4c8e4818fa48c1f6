# Documentation installed in $(docdir).
dist_doc_DATA += README.md doc/api.md doc/plugins.md doc/cpu.md doc/testing.md \
	doc/ops.md doc/numerics.md doc/performance.md
